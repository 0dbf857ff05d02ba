#!/usr/bin/env bash
# Per-rank costs of global dependencies at P = 2 ... 64 ranks of this machine (weak scaling,
# oversubscribed, one worker per rank): bench_global_scale once per P, then a table.
#   bench/run_global_scale.sh [BUILD_DIR] [MPI: openmpi|mpich] [P...]
# Counts, not times: valid on 2 cores. docs/benchmarks.md, "Global dependencies at scale".
set -euo pipefail
build=${1:-build}
mpi=${2:-openmpi}
shift $(($# > 2 ? 2 : $#))
ranks=("$@")
((${#ranks[@]})) || ranks=(2 4 8 16 32 64)
if [[ $mpi == openmpi ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1
  launch=(mpiexec.openmpi --oversubscribe --bind-to none -x HYTASK_THREADS=1)
  program=$build/bench/bench_global_scale
  [[ -x $program ]] || program=$build/bench/bench_global_scale_openmpi
else
  launch=(mpiexec.mpich -env HYTASK_THREADS 1)
  program=$build/bench/bench_global_scale_mpich
  [[ -x $program ]] || program=$build/bench/bench_global_scale
fi
[[ -x $program ]] || { echo "run_global_scale.sh: no $program: build bench_global_scale first" >&2; exit 1; }
printf '| P | remote accesses per rank | A / remote | B / remote | C / remote | buffers / remote | bytes / remote | rounds / phase | bytes per rank per round | peak tasks per rank | peak ordered accesses per rank |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for p in "${ranks[@]}"; do
  line=$(timeout 900 "${launch[@]}" -n "$p" "$program" | grep '^bench_global_scale ')
  get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$p" "$(get remote_per_rank)" \
    "$(get announces_per_remote)" "$(get releases_per_remote)" "$(get completions_per_remote)" \
    "$(get buffers_per_remote)" "$(get bytes_per_remote)" "$(get rounds_per_phase)" \
    "$(get round_bytes_per_round)" "$(get peak_tasks)" "$(get peak_nodes)"
done
