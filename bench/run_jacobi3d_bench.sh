#!/usr/bin/env bash
# The jacobi3d measurements of docs/benchmarks.md: every variant on the cluster in a box
# (2 nodes, 1 core and 1 rank each), with the link's bandwidth set so that the halo
# exchange takes about as long as the compute. Repeated REPS times, the runs of one
# repetition back to back, so that the medians compare variants measured side by side.
#
#   bench/run_jacobi3d_bench.sh [OUTDIR]        (as root; ~20 minutes with REPS=3)
#
# Environment: REPS (3), RATE (300mbit), MTU (9000; MPICH's jobs 1500), SIZE (256), ITERS (60),
# JOB_TIMEOUT (300 s per job).
# Writes one CSV per run and summary.txt (medians, the targets of issues 5 and 19, seed 003's
# model).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
out=${1:-$build/jacobi3d-bench}
reps=${REPS:-3} rate=${RATE:-300mbit} mtu=${MTU:-9000}
mkdir -p "$out"
rm -f "$out"/*.csv
cluster="$root/scripts/cluster.sh"
common=(--size "${SIZE:-256}" --iters "${ITERS:-60}" --stencil 6 --decomposition 1d)
tests=0,1,4,16

# run TAG MPI CLUSTER-OPTIONS... -- JACOBI3D-OPTIONS...: one job, its CSV tagged.
run() {
  local tag=$1 mpi=$2; shift 2
  local copts=()
  while [[ $1 != -- ]]; do copts+=("$1"); shift; done
  shift
  local prog=$build/apps/jacobi3d/jacobi3d
  [[ $mpi == mpich ]] && prog=$build/apps/jacobi3d/jacobi3d-mpich
  # MPICH (ch4:ucx over tcp) hangs in MPI_Finalize on these namespaces with jumbo frames
  # (about one job in two): its jobs use standard frames.
  local frames=$mtu
  [[ $mpi == mpich ]] && frames=1500
  echo "== $tag ($mpi mtu $frames ${copts[*]}): $*"
  # A job that hangs after writing its results (MPICH_ASYNC_PROGRESS=1 in MPI_Finalize) is
  # stopped, not waited for: JOB_TIMEOUT seconds (300; a job takes under a minute).
  timeout "${JOB_TIMEOUT:-300}" "$cluster" run --mpi "$mpi" --rate "$rate" --mtu "$frames" "${copts[@]}" -- \
    "$prog" "${common[@]}" --csv "$out/$tag.csv" "$@" | tee "$out/$tag.txt" ||
    echo "== $tag: the job exited with status $?"
}

for rep in $(seq 1 "$reps"); do
  for mpi in openmpi mpich; do
    [[ $mpi == mpich && ! -x $build/apps/jacobi3d/jacobi3d-mpich ]] && continue
    # The MPI-only and fork-join peers in a job of their own (MPI_THREAD_FUNNELED), hytask's
    # variants in another (MPI_THREAD_MULTIPLE).
    run "$mpi.peers.$rep" $mpi -- --variant mpi-blocking,mpi-nonblocking,hybrid-blocking,hybrid-nonblocking \
      --tests $tests
    run "$mpi.hytask.$rep" $mpi -- --variant commtask,dataflow,intercepted
  done
  if [[ -x $build/apps/jacobi3d/jacobi3d-mpich ]]; then
    # MPICH's own progress thread: the compute column, beside the same run without it
    # (mpich.peers), is its CPU cost.
    MPICH_ASYNC_PROGRESS=1 run "mpich-async.peers.$rep" mpich -- \
      --variant mpi-blocking,mpi-nonblocking,hybrid-nonblocking --tests 0
  fi
  # Seed 003's model needs 2 threads per node: both nodes share both cores here.
  run "openmpi-shared.model.$rep" openmpi --cpus shared -- \
    --variant hybrid-blocking,hybrid-reserve,dataflow --threads 2
done
# Standard frames: the kernel's per-packet cost on the nodes' own cores.
mtu=1500 run "openmpi-mtu1500.all.1" openmpi -- \
  --variant mpi-blocking,mpi-nonblocking,commtask,dataflow --tests 4

# Summary: medians per (configuration, variant, tests) over the repetitions.
for f in "$out"/*.csv; do
  tag=$(basename "$f" .csv)
  config=${tag%.*}
  tail -n +2 "$f" | sed "s|^|$config,|"
done >"$out/all.csv"
awk -F, '
  function median(list,   n, v, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; ++i) { t = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > t; --j) v[j + 1] = v[j]; v[j + 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  {
    key = $1 SUBSEP $2 SUBSEP $3
    if (!(key in t)) { order[++n] = key }
    t[key] = t[key] " " $14; c[key] = c[key] " " $15; m[key] = m[key] " " $16; thr[key] = $5
    reps[key]++
  }
  END {
    printf "%-26s %-20s %5s %7s %9s %9s %9s %9s\n", "configuration", "variant", "tests", "threads", "ms/iter", "compute", "comm", "ideal"
    for (i = 1; i <= n; ++i) {
      split(order[i], k, SUBSEP)
      T[order[i]] = median(t[order[i]]); C[order[i]] = median(c[order[i]]); M[order[i]] = median(m[order[i]])
      I = C[order[i]] > M[order[i]] ? C[order[i]] : M[order[i]]
      printf "%-26s %-20s %5s %7s %9.3f %9.3f %9.3f %9.3f   (%d runs)\n", k[1], k[2], k[3], thr[order[i]], T[order[i]], C[order[i]], M[order[i]], I, reps[order[i]]
    }
    print ""
    for (i = 1; i <= n; ++i) {
      split(order[i], k, SUBSEP)
      if (k[2] != "dataflow" || k[1] ~ /shared|mtu/) continue
      cfg = k[1]; sub(/\.hytask$/, "", cfg)
      df = T[order[i]]; ideal = C[order[i]] > M[order[i]] ? C[order[i]] : M[order[i]]
      mb = T[cfg ".peers" SUBSEP "mpi-blocking" SUBSEP ""]
      best = 0; bx = ""
      for (j = 1; j <= n; ++j) {
        split(order[j], q, SUBSEP)
        if (q[1] == cfg ".peers" && q[2] == "hybrid-nonblocking" && (best == 0 || T[order[j]] < best)) { best = T[order[j]]; bx = q[3] }
      }
      printf "%s: dataflow %.3f ms/iter; vs mpi-blocking %.2fx (target >= 1.5); vs hybrid-nonblocking tests=%s %.2fx (target >= 1.2); %.1f%% above ideal max(compute, comm) (target <= 10%%)\n", cfg, df, mb / df, bx, best / df, 100 * (df / ideal - 1)
      ic = T[k[1] SUBSEP "intercepted" SUBSEP ""]
      if (ic > 0)
        printf "%s: intercepted %.3f ms/iter, %+.1f%% against dataflow (target: within 5%%)\n", cfg, ic, 100 * (ic / df - 1)
    }
  }' "$out/all.csv" | tee "$out/summary.txt"
grep -h "Rabenseifner-Wellein model" "$out"/openmpi-shared.model.*.txt | tee -a "$out/summary.txt"
echo "results in $out"
