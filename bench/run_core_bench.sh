#!/usr/bin/env bash
# Task-runtime benchmark: hytask beside OpenMP tasks (GCC/libgomp and Clang/libomp), same
# work, same thread count, interleaved runs in fresh processes (so max RSS is per case).
# Prints a Markdown table of median ns per unit, the ratio to hytask and the max RSS.
#   bench/run_core_bench.sh [--threads 2] [--rounds 3] [--build build]
set -euo pipefail
threads=2 rounds=3 build=build
while (($#)); do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "run_core_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$root/$build/bench"
for b in bench_tasks bench_omp_gcc bench_omp_clang; do
  [[ -x "$bin/$b" ]] || { echo "missing $bin/$b: build first (scripts/setup.sh)" >&2; exit 1; }
done

# case : units per run for hytask/libomp : for libgomp (its dependency tracking grows without bound)
# (fib: the argument of fib; the units are its calls, each a task)
cases=("empty:1000000:1000000" "deps:1000000:50000" "yield:200000:200000" "loop:1000000:1000000" "forkjoin:20000:20000" "fib:27:27")
impls=("hytask:bench_tasks" "openmp-libgomp:bench_omp_gcc" "openmp-libomp:bench_omp_clang")

# The cache-line round trip between the first two CPUs, before and after: it moves the
# figures of every case whose tasks cross cores (docs/benchmarks.md).
c2c() { [[ -x "$bin/bench_core_to_core" ]] && "$bin/bench_core_to_core" | sed "s/^/$1: /" || true; }
c2c before

declare -A samples rss units
for r in $(seq 1 "$rounds"); do
  for c in "${cases[@]}"; do
    IFS=: read -r name n n_gomp <<<"$c"
    for i in "${impls[@]}"; do
      IFS=: read -r impl exe <<<"$i"
      nn=$n; [[ $impl == openmp-libgomp ]] && nn=$n_gomp
      echo "round $r/$rounds: $name $impl" >&2
      line=$(OMP_NUM_THREADS=$threads "$bin/$exe" --case "$name" --n "$nn" --threads "$threads" --reps 3)
      ns=$(sed -E 's/.*ns_per_unit=([0-9.]+).*/\1/' <<<"$line")
      samples[$name/$impl]+="$ns "
      rss[$name/$impl]=$(sed -E 's/.*max_rss_kib=([0-9]+).*/\1/' <<<"$line")
      units[$name/$impl]=$(sed -E 's/.* n=([0-9]+).*/\1/' <<<"$line")
    done
  done
done

c2c after

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo
echo "| case | runtime | ns per unit (median of $rounds) | vs hytask | max RSS | units |"
echo "|---|---|---:|---:|---:|---:|"
for c in "${cases[@]}"; do
  IFS=: read -r name _ _ <<<"$c"
  ref=$(median <<<"${samples[$name/hytask]}")
  for i in "${impls[@]}"; do
    IFS=: read -r impl _ <<<"$i"
    m=$(median <<<"${samples[$name/$impl]}")
    ratio=$(awk -v a="$m" -v b="$ref" 'BEGIN { printf "%.2fx", a / b }')
    echo "| $name | $impl | $m | $ratio | $((${rss[$name/$impl]} / 1024)) MiB | ${units[$name/$impl]} |"
  done
done
