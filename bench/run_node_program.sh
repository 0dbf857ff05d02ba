#!/usr/bin/env bash
# The node agent's figures of docs/benchmarks.md ("Node-wide progress agent"): the overlap
# program (bench/overlap_program.cpp: a transfer task doing a blocking send or receive of
# 8 MiB, then 4 compute tasks of 10 ms, no hints) on the cluster in a box, 2 nodes of one core
# each at 2 Gbit/s, with 1, 2 and 4 ranks per node. Per MPI and ranks per node, back to back
# under one hold of the shared machine's benchmark lock (exclusive): one job per progress
# policy (workers, thread, node; each with plain MPI beside it in the same job) and, with
# MPICH, plain MPI under MPICH_ASYNC_PROGRESS=1. The whole set REPS times. Prints the machine,
# the date and a Markdown table (bench/node_program_table.py): overlap % / compute speed % /
# progress cores per node, medians and ranges over the repetitions, and node against thread
# per repetition.
#   bench/run_node_program.sh [OUTDIR]           (as root; ~3 minutes per repetition)
# Environment: REPS (3), ITERS (8), RANKS_PER_NODE ("1 2 4"), MPIS ("openmpi mpich"),
# SIZE (8M), TASK_MS (10), TASKS (4), LOCK (/tmp/hytask-bench.lock).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
reps=${REPS:-3} iters=${ITERS:-8} rpns=${RANKS_PER_NODE:-1 2 4} mpis=${MPIS:-openmpi mpich}
size=${SIZE:-8M} task_ms=${TASK_MS:-10} tasks=${TASKS:-4} lock=${LOCK:-/tmp/hytask-bench.lock}

# One group: every setting for one MPI and ranks per node, run by `group` under the lock.
if [[ ${1:-} == --group ]]; then
  rep=$2 mpi=$3 rpn=$4 exe=$5 results=$6
  one() {  # SETTING VARIANTS [ENV...]
    local setting=$1 variants=$2; shift 2
    echo "== $(date -u +%H:%M:%S) rep $rep $mpi $rpn/node $setting" >&2
    env "$@" timeout 240 "$root/scripts/cluster.sh" run --mpi "$mpi" -n $((2 * rpn)) -- \
      "$exe" --iters "$iters" --sizes "$size" --task-ms "$task_ms" --tasks "$tasks" \
      --variants "$variants" 2>&1 | grep '^overlap_program ' |
      sed "s/^overlap_program /rep=$rep setting=$setting /" | tee -a "$results" || true
  }
  for policy in workers thread node; do one "$policy" mpi,hytask HYTASK_PROGRESS=$policy; done
  [[ $mpi == mpich ]] && one mpich-async mpi MPICH_ASYNC_PROGRESS=1
  exit 0
fi

out=${1:-$build/node-program}
mkdir -p "$out"
results="$out/results.txt"
: >"$results"
machine=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
for ((rep = 1; rep <= reps; ++rep)); do
  for mpi in $mpis; do
    exe=$build/bench/overlap_program
    [[ $mpi == mpich ]] && exe=$build/bench/overlap_program_mpich
    [[ -x $exe ]] || { echo "missing $exe: build it first" >&2; continue; }
    for rpn in $rpns; do
      flock -x "$lock" "$0" --group "$rep" "$mpi" "$rpn" "$exe" "$results"
    done
  done
done
{
  echo "$machine, $(date -u +%Y-%m-%d), $size, $tasks × $task_ms ms tasks, $reps repetitions"
  echo
  python3 "$root/bench/node_program_table.py" "$results"
} | tee "$out/table.md"
echo "results in $out" >&2
