#!/usr/bin/env bash
# Task-aware MPI benchmark: hytask beside plain MPI in the same runs, on 2 ranks of this
# machine (shared memory), one worker per rank, under Open MPI and under MPICH (when
# bench_mpi_mpich was built). Prints the raw result lines, then a Markdown table.
#   bench/run_mpi_bench.sh [--build build] [--reps 7]
set -euo pipefail
build=build reps=7
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) echo "run_mpi_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/$build/bench"
[[ -x "$bin/bench_mpi" ]] || { echo "missing $bin/bench_mpi: build first (scripts/setup.sh)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HYTASK_THREADS=1

# The launcher of the MPI a binary was linked against.
launch() {
  local exe=$1; shift
  if [[ $exe == *_mpich ]]; then mpiexec.mpich -n 2 "$bin/$exe" "$@"
  else mpiexec --bind-to none -n 2 "$bin/$exe" "$@"; fi
}

exes=(bench_mpi)
[[ -x "$bin/bench_mpi_mpich" ]] && exes+=(bench_mpi_mpich)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for exe in "${exes[@]}"; do
  mpi=$([[ $exe == *_mpich ]] && echo MPICH || echo "Open MPI")
  echo "== $mpi" >&2
  { launch "$exe" --case latency --n 20000 --reps "$reps"
    launch "$exe" --case rate --n 2000 --reps "$reps"
    for p in workers thread none; do
      HYTASK_PROGRESS=$p launch "$exe" --case busy --tasks 20000 --task-us 20 --reps 3
    done; } | sed "s/^/mpi=${mpi// /_} /" | tee -a "$out"
done

field() { sed -E "s/(^|.* )$1=([^ ]+).*/\2/"; }
echo
echo "| MPI | case | variant | progress | value | unit | detail |"
echo "|---|---|---|---|---:|---|---|"
while read -r line; do
  mpi=$(field mpi <<<"$line" | tr _ ' ')
  detail=$(sed -E 's/.*workers=[0-9]+ ?//' <<<"$line")
  echo "| $mpi | $(field case <<<"$line") | $(field variant <<<"$line") | $(field progress <<<"$line") | $(field value <<<"$line") | $(field unit <<<"$line") | $detail |"
done < <(grep '^mpi=' "$out")
