#!/usr/bin/env bash
# Message rate of the global layer's transports, two-sided and RMA, on this machine: each MPI,
# each rank count, each pattern, one job each in which bench_am_rate interleaves the two
# transports' repetitions; prints a Markdown table of the medians (buffers per second, the
# whole job's) and their ratio. docs/benchmarks.md, "Active-message transports".
#   bench/run_am_rate.sh [BUILD_DIR] [--mpi openmpi,mpich] [--ranks 2,4] [--reps R]
#                        [--messages N] [--bytes B]
# Timed: run it alone (flock -x /tmp/hytask-bench.lock bench/run_am_rate.sh ...).
set -euo pipefail
build=build
mpis=openmpi,mpich ranks=2,4 reps=5 messages=20000 bytes=64
while (($#)); do
  case $1 in
    --mpi) mpis=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --messages) messages=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    -*) echo "run_am_rate.sh: unknown option $1" >&2; exit 2 ;;
    *) build=$1; shift ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "bench/run_am_rate.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
printf '| MPI | ranks | pattern | two-sided (buffers/s) | RMA queue (buffers/s) | RMA / two-sided |\n'
printf '|---|---:|---|---:|---:|---:|\n'
for mpi in ${mpis//,/ }; do
  if [[ $mpi == openmpi ]]; then
    program=$build/bench/bench_am_rate
    [[ -x $program ]] || program=$build/bench/bench_am_rate_openmpi
    launch=(mpiexec.openmpi --oversubscribe --bind-to none -x HYTASK_THREADS=1)
  else
    program=$build/bench/bench_am_rate_mpich
    [[ -x $program ]] || program=$build/bench/bench_am_rate
    launch=(mpiexec.mpich -env HYTASK_THREADS 1)
  fi
  [[ -x $program ]] || { echo "run_am_rate.sh: no $program: build bench_am_rate first" >&2; exit 1; }
  for p in ${ranks//,/ }; do
    for pattern in all-to-all all-to-one one-to-all; do
      out=$(timeout 300 "${launch[@]}" -n "$p" "$program" --pattern "$pattern" --reps "$reps" \
            --messages "$messages" --bytes "$bytes" 2>&1) || { echo "$out" >&2; exit 1; }
      line=$(grep '^bench_am_rate median ' <<<"$out")
      two=$(sed -E 's/.* two-sided=([0-9]+).*/\1/' <<<"$line")
      rma=$(sed -E 's/.* rma=([0-9]+).*/\1/' <<<"$line")
      ratio=$(sed -E 's/.*rma\/two-sided=([0-9.]+).*/\1/' <<<"$line")
      printf '| %s | %s | %s | %s | %s | %s |\n' "$mpi" "$p" "$pattern" "$two" "$rma" "$ratio"
    done
  done
done
