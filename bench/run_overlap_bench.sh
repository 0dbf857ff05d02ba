#!/usr/bin/env bash
# The full overlap sweep of docs/benchmarks.md: hytask-overlap from 64 KiB to 16 MiB on the
# cluster in a box (2 nodes, 1 rank and 1 core each, 2 Gbit/s), with Open MPI and with
# MPICH, in every mode; MPICH's progress thread in a run of its own. Writes JSON, CSV, the
# tables and one plot per MPI into OUTDIR (default build/overlap-bench), then copies the
# plots to docs/ when --update-docs is given.
#   bench/run_overlap_bench.sh [OUTDIR] [--update-docs]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
out=$build/overlap-bench update=0
for a in "$@"; do
  if [[ $a == --update-docs ]]; then update=1; else out=$a; fi
done
mkdir -p "$out"
cluster="$root/scripts/cluster.sh"
args=(--sizes 64K:16M --iters 10)
modes=mpi,hytask-workers,hytask-thread,hytask-none

"$cluster" run --mpi openmpi -n 2 -- "$build/tools/hytask-overlap" --modes $modes "${args[@]}" \
  --json "$out/openmpi.json" | tee "$out/openmpi.txt"
if [[ -x $build/tools/hytask-overlap-mpich ]]; then
  "$cluster" run --mpi mpich -n 2 -- "$build/tools/hytask-overlap-mpich" --modes $modes \
    "${args[@]}" --json "$out/mpich.json" | tee "$out/mpich.txt"
  "$cluster" run --mpi mpich -n 2 -- "$build/tools/hytask-overlap-mpich" --modes mpi-progress \
    "${args[@]}" --json "$out/mpich-progress.json" | tee "$out/mpich-progress.txt"
  "$build/tools/hytask-overlap" --merge "$out/mpich.json" "$out/mpich-progress.json" \
    --csv "$out/mpich-all.csv" --plot "$out/overlap-mpich.png" >"$out/mpich-all.txt"
fi
"$build/tools/hytask-overlap" --merge "$out/openmpi.json" --csv "$out/openmpi.csv" \
  --plot "$out/overlap-openmpi.png" >/dev/null
if ((update)); then
  cp "$out/overlap-openmpi.png" "$root/docs/"
  [[ -f $out/overlap-mpich.png ]] && cp "$out/overlap-mpich.png" "$root/docs/"
fi
echo "results in $out"
