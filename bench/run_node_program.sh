#!/usr/bin/env bash
# The node agent's figures of docs/benchmarks.md ("Node-wide progress agent"): the overlap
# program (bench/overlap_program.cpp: a transfer task doing a blocking send or receive of
# 8 MiB, then 4 compute tasks of 10 ms, no hints) on the cluster in a box, 2 nodes of one core
# each at 2 Gbit/s, with 1, 2 and 4 ranks per node; per MPI one job per progress policy
# (workers, thread, node, each with plain MPI beside it in the same job) and, with MPICH, plain
# MPI under MPICH_ASYNC_PROGRESS=1; the whole set REPS times, interleaved. Every job holds the
# shared machine's benchmark lock (exclusive) while it runs. Prints a Markdown table of
# overlap % / compute speed % / progress cores per node, with the machine and the date.
#   bench/run_node_program.sh [OUTDIR]           (as root; ~5 minutes per repetition)
# Environment: REPS (3), ITERS (8), RANKS_PER_NODE ("1 2 4"), MPIS ("openmpi mpich"),
# SIZE (8M), TASK_MS (10), TASKS (4), LOCK (/tmp/hytask-bench.lock).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
out=${1:-$build/node-program}
reps=${REPS:-3} iters=${ITERS:-8} rpns=${RANKS_PER_NODE:-1 2 4} mpis=${MPIS:-openmpi mpich}
size=${SIZE:-8M} task_ms=${TASK_MS:-10} tasks=${TASKS:-4} lock=${LOCK:-/tmp/hytask-bench.lock}
mkdir -p "$out"
results="$out/results.txt"
: >"$results"
cluster="$root/scripts/cluster.sh"
machine=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
run() {  # REP MPI RPN SETTING VARIANTS [ENV...]
  local rep=$1 mpi=$2 rpn=$3 setting=$4 variants=$5; shift 5
  local exe=overlap_program
  [[ $mpi == mpich ]] && exe=overlap_program_mpich
  echo "== rep $rep $mpi $rpn/node $setting" >&2
  env "$@" flock -x "$lock" timeout 300 "$cluster" run --mpi "$mpi" -n $((2 * rpn)) -- \
    "$build/bench/$exe" --iters "$iters" --sizes "$size" --task-ms "$task_ms" --tasks "$tasks" \
    --variants "$variants" 2>&1 | grep '^overlap_program ' |
    sed "s/^overlap_program /rep=$rep setting=$setting /" | tee -a "$results" || true
}
for ((rep = 1; rep <= reps; ++rep)); do
  for mpi in $mpis; do
    exe=overlap_program
    [[ $mpi == mpich ]] && exe=overlap_program_mpich
    [[ -x $build/bench/$exe ]] || { echo "missing $build/bench/$exe: build it first" >&2; continue; }
    for rpn in $rpns; do
      for policy in workers thread node; do
        run "$rep" "$mpi" "$rpn" "$policy" mpi,hytask HYTASK_PROGRESS=$policy
      done
      [[ $mpi == mpich ]] && run "$rep" "$mpi" "$rpn" mpich-async mpi MPICH_ASYNC_PROGRESS=1
    done
  done
done

field() { sed -E "s/(^|.* )$1=([^ ]+).*/\2/"; }
{
  echo "$machine, $(date -u +%Y-%m-%d), $size, $tasks × $task_ms ms tasks, $reps repetitions"
  echo
  echo "| MPI | ranks per node | rep | setting | variant | overlap % | compute speed % | progress cores per node | wakes | suppressed |"
  echo "|---|---:|---:|---|---|---:|---:|---:|---:|---:|"
  while read -r l; do
    echo "| $(field mpi <<<"$l") | $(field ranks_per_node <<<"$l") | $(field rep <<<"$l") | $(field setting <<<"$l") | $(field variant <<<"$l") | $(field overlap_pct <<<"$l") | $(field speed_pct <<<"$l") | $(field progress_cores <<<"$l") | $(field wakes <<<"$l") | $(field suppressed <<<"$l") |"
  done <"$results"
} | tee "$out/table.md"
echo "results in $out" >&2
