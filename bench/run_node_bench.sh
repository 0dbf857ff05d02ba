#!/usr/bin/env bash
# Seed 002's sweep with hytask-overlap (docs/benchmarks.md's "Node-wide progress agent" shows
# bench/run_node_program.sh's figures instead, the overlap program side by side): hytask-overlap
# on the cluster in a box (2 nodes, one core each, 2 Gbit/s) with 1, 2 and 4 ranks per node,
# the exchange and the one-way receiver-first and sender-first orders, and small-message
# latency, and the asynchronous progression (receiver-first, T_syn 1.5-3 T_lat: when the data
# arrived); plain MPI, hytask's workers, thread and node policies, and (MPICH)
# MPICH_ASYNC_PROGRESS=1 in runs of its own. Each run writes OUTDIR/<mpi>_<config>.json and
# .txt (default build/node-bench). Takes about 30 minutes.
#   bench/run_node_bench.sh [OUTDIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
out=${1:-$build/node-bench}
mkdir -p "$out"
cluster="$root/scripts/cluster.sh"
sweep=(--steps 0.1:1.1:0.2)
run() {  # NAME MPI RANKS TOOL ARGS...
  local name=$1 mpi=$2 np=$3
  shift 3
  echo "[node-bench] $name: $*" >&2
  "$cluster" run --mpi "$mpi" -n "$np" -- "$@" --quiet --json "$out/$name.json" | tee "$out/$name.txt"
}
configs() {  # MPI TOOL MODES SUFFIX
  local mpi=$1 tool=$2 modes=$3 sfx=$4
  run "${mpi}_n2_ex$sfx" "$mpi" 2 "$tool" --modes "$modes" --sizes 1M,4M,16M "${sweep[@]}"
  run "${mpi}_n4_ex$sfx" "$mpi" 4 "$tool" --modes "$modes" --sizes 1M,4M,16M "${sweep[@]}"
  run "${mpi}_n8_ex$sfx" "$mpi" 8 "$tool" --modes "$modes" --sizes 4M "${sweep[@]}"
  for order in receiver-first sender-first; do
    run "${mpi}_n2_${order}$sfx" "$mpi" 2 "$tool" --modes "$modes" --sizes 1M,4M,16M \
      "${sweep[@]}" --order "$order"
  done
  run "${mpi}_n2_lat$sfx" "$mpi" 2 "$tool" --modes "$modes" --sizes 8,1K,16K --steps 0.5 \
    --min-time 0.2
  run "${mpi}_n2_progression$sfx" "$mpi" 2 "$tool" --modes "$modes" --sizes 1M,4M,16M \
    --steps 1.5:3:0.5 --order receiver-first
}
modes=mpi,hytask-workers,hytask-thread,hytask-node
configs openmpi "$build/tools/hytask-overlap" "$modes" ""
if [[ -x $build/tools/hytask-overlap-mpich ]]; then
  configs mpich "$build/tools/hytask-overlap-mpich" "$modes" ""
  configs mpich "$build/tools/hytask-overlap-mpich" mpi-progress _progress
fi
