#!/usr/bin/env bash
# The scheduling issue's overlap program (bench/overlap_program.cpp) on the cluster in a box:
# 2 nodes of 1 core, 1 rank and 1 worker each, 2 Gbit/s, with Open MPI and with MPICH. Per
# MPI: 1 ms compute tasks (36 of them) and 10 ms ones (4), messages of 1 MiB and 8 MiB; plain
# MPI, plain MPI with an MPI_Test per task-sized piece, hytask at its defaults, and hytask
# with this_task::poll() in the compute, in the same job. Then hytask without the backstop
# (HYTASK_BACKSTOP_US=0) for the 10 ms case. Prints a Markdown table.
#   bench/run_overlap_program.sh [OUTDIR]           (as root; ~5 minutes)
# Environment: ITERS (8), RATE (2gbit).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
out=${1:-$build/overlap-program}
iters=${ITERS:-8} rate=${RATE:-2gbit}
mkdir -p "$out"
: >"$out/results.txt"
cluster="$root/scripts/cluster.sh"
run() {  # MPI EXE LABEL ARGS...
  local mpi=$1 exe=$2 label=$3; shift 3
  echo "== $mpi $label: $*" >&2
  timeout 600 "$cluster" run --mpi "$mpi" -n 2 --rate "$rate" -- "$build/bench/$exe" --iters "$iters" "$@" 2>&1 |
    grep '^overlap_program ' | sed "s/^overlap_program /setting=$label /" | tee -a "$out/results.txt"
}
for mpi in openmpi mpich; do
  exe=overlap_program
  [[ $mpi == mpich ]] && exe=overlap_program_mpich
  [[ -x $build/bench/$exe ]] || { echo "missing $build/bench/$exe: build first" >&2; continue; }
  run $mpi $exe default --sizes 1M,8M --task-ms 1 --tasks 36
  run $mpi $exe default --sizes 1M,8M --task-ms 10 --tasks 4
  HYTASK_BACKSTOP_US=0 run $mpi $exe no-backstop --sizes 1M,8M --task-ms 10 --tasks 4
done

field() { sed -E "s/(^|.* )$1=([^ ]+).*/\2/"; }
echo
echo "| MPI | tasks | message | setting | variant | transfer alone ms | compute alone ms | both ms | overlap | compute speed |"
echo "|---|---|---|---|---|---:|---:|---:|---:|---:|"
while read -r l; do
  b=$(field bytes <<<"$l")
  echo "| $(field mpi <<<"$l") | $(field tasks <<<"$l") × $(field task_ms <<<"$l") ms | $((b >> 20)) MiB | $(field setting <<<"$l") | $(field variant <<<"$l") | $(field comm_ms <<<"$l") | $(field comp_ms <<<"$l") | $(field both_ms <<<"$l") | $(field overlap_pct <<<"$l") % | $(field speed_pct <<<"$l") % |"
done <"$out/results.txt" | grep -v "no-backstop | mpi" | tee "$out/table.md"
echo "results in $out" >&2
