#!/usr/bin/env bash
# hytask::copy of global_array ranges (1 KiB - 16 MiB) from and to another rank, beside plain
# MPI_Get / MPI_Put + MPI_Win_flush of the same bytes in the same run, 2 ranks of one worker,
# under Open MPI and MPICH (when bench_global_copy_mpich was built), on this machine (shared
# memory) and, with --cluster (as root), on the cluster in a box. Prints the raw lines, then
# a Markdown table of median times (µs) and the ratio hytask / MPI.
#   bench/run_global_copy.sh [--build build] [--reps 21] [--cluster]
set -euo pipefail
build=build reps=21 cluster=0
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --cluster) cluster=1; shift ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "run_global_copy.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/$build/bench"
[[ -x "$bin/bench_global_copy" ]] || { echo "missing $bin/bench_global_copy: build it first (ninja -C $build bench_global_copy)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HYTASK_THREADS=1

exes=(bench_global_copy)
[[ -x "$bin/bench_global_copy_mpich" ]] && exes+=(bench_global_copy_mpich)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for exe in "${exes[@]}"; do
  mpi=openmpi
  [[ $exe == *_mpich ]] && mpi=mpich
  if [[ $mpi == mpich ]]; then mpiexec.mpich -n 2 "$bin/$exe" --reps "$reps"
  else mpiexec --bind-to none -n 2 "$bin/$exe" --reps "$reps"; fi | sed "s/^/where=local mpi=$mpi /" | tee -a "$out"
  if ((cluster)); then
    "$root/scripts/cluster.sh" run --mpi "$mpi" -n 2 --rate 1gbit -- "$bin/$exe" --reps "$reps" --max-bytes 4194304 \
      | grep '^bench_global_copy' | sed "s/^/where=cluster mpi=$mpi /" | tee -a "$out"
  fi
done

echo
echo "| where | MPI | op | bytes | hytask::copy µs | MPI µs | hytask / MPI | hytask GB/s |"
echo "|---|---|---|---:|---:|---:|---:|---:|"
awk '
  { for (i = 1; i <= NF; ++i) { split($i, kv, "="); f[kv[1]] = kv[2] }
    key = f["where"] "|" f["mpi"] "|" f["op"] "|" f["bytes"]
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    us[key, f["variant"]] = f["us"]; gbs[key, f["variant"]] = f["gbs"] }
  END { for (k = 1; k <= n; ++k) { key = order[k]; split(key, p, "|")
          b = p[4]; label = b >= 1048576 ? b / 1048576 " MiB" : b / 1024 " KiB"
          printf "| %s | %s | %s | %s | %.1f | %.1f | %.2f | %.2f |\n", p[1], p[2], p[3], label,
            us[key, "hytask"], us[key, "mpi"], us[key, "hytask"] / us[key, "mpi"], gbs[key, "hytask"] } }' "$out"
