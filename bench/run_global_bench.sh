#!/usr/bin/env bash
# Global task dependencies (issue 17): cost per task and remote-release latency, beside a
# plain task and plain MPI in the same runs, one worker per rank, 2 ranks, under Open MPI
# and MPICH (when bench_global_mpich was built): on this machine (shared memory) and, as
# root, on the cluster in a box (two namespaces joined by a 1 Gbit/s link, a core each).
# Prints the raw result lines, then a Markdown table.
#   bench/run_global_bench.sh [--build build] [--reps 5] [--no-cluster]
set -euo pipefail
build=build reps=5 cluster=1
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --no-cluster) cluster=0; shift ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "run_global_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/$build/bench"
[[ -x "$bin/bench_global" ]] || { echo "missing $bin/bench_global: build first (scripts/setup.sh)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HYTASK_THREADS=1

local_run() {
  local exe=$1; shift
  if [[ $exe == *_mpich ]]; then mpiexec.mpich -n 2 "$bin/$exe" "$@"
  else mpiexec --bind-to none -n 2 "$bin/$exe" "$@"; fi
}
cluster_run() {
  local exe=$1; shift
  local mpi=openmpi
  [[ $exe == *_mpich ]] && mpi=mpich
  "$root/scripts/cluster.sh" run --mpi "$mpi" -n 2 --rate 1gbit -- "$bin/$exe" "$@"
}

exes=(bench_global)
[[ -x "$bin/bench_global_mpich" ]] && exes+=(bench_global_mpich)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for exe in "${exes[@]}"; do
  mpi=$([[ $exe == *_mpich ]] && echo MPICH || echo "Open MPI")
  echo "== $mpi, shared memory" >&2
  { local_run "$exe" --case cost --n 100000 --reps "$reps"
    local_run "$exe" --case latency --n 2000 --reps "$reps"; } |
    sed "s/^/mpi=${mpi// /_} where=shm /" | tee -a "$out"
  if ((cluster)); then
    echo "== $mpi, cluster in a box" >&2
    cluster_run "$exe" --case latency --n 1000 --reps "$reps" |
      sed "s/^/mpi=${mpi// /_} where=cluster /" | tee -a "$out"
  fi
done

field() { sed -E "s/(^|.* )$1=([^ ]+).*/\2/"; }
echo
echo "| MPI | where | case | variant | value | unit |"
echo "|---|---|---|---|---:|---|"
while read -r line; do
  echo "| $(field mpi <<<"$line" | tr _ ' ') | $(field where <<<"$line") | $(field case <<<"$line") | $(field variant <<<"$line") | $(field value <<<"$line") | $(field unit <<<"$line") |"
done < <(grep '^mpi=' "$out")
