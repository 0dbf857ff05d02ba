#!/usr/bin/env bash
# hytask-model against measured times (docs/benchmarks.md#model): jacobi3d on the cluster in a
# box, its masteronly variant traced, in the same job as the variants the model predicts;
# hytask-model reads the trace and the table compares its predicted gain over masteronly,
# ε = T(masteronly) / T(variant), with the measured one.
#
#   bench/run_model_validation.sh [OUTDIR]        (as root; REPS=3: about 3 minutes)
#
# Environment: REPS (3), RATE (300mbit), MTU (9000), SIZE (256), ITERS (60), THREADS (2),
# CPUS (shared: both nodes share both cores, the only way to give each rank 2 threads here).
# Each job is a few tens of seconds; wrap the script in flock -x when the machine is shared.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
out=${1:-$build/model-validation}
reps=${REPS:-3} rate=${RATE:-300mbit} mtu=${MTU:-9000} threads=${THREADS:-2} cpus=${CPUS:-shared}
mkdir -p "$out"
rm -f "$out"/*.csv "$out"/*.json "$out"/*.txt
# masteronly last: every hytask variant's runtime writes HYTASK_TRACE, the last one stays.
variants=hybrid-blocking,hybrid-nonblocking,hybrid-reserve,commtask,dataflow,masteronly
for rep in $(seq 1 "$reps"); do
  # Other users' work on a shared machine shows here: the load before each job.
  echo "== rep $rep; load average before the job: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/load$rep.txt"
  HYTASK_TRACE=$out/trace$rep.json timeout 300 "$root/scripts/cluster.sh" run --mpi openmpi --rate "$rate" \
    --mtu "$mtu" --cpus "$cpus" -- "$build/apps/jacobi3d/jacobi3d" --size "${SIZE:-256}" --iters "${ITERS:-60}" \
    --stencil 6 --decomposition 1d --threads "$threads" --tests 0,4 --variant "$variants" \
    --csv "$out/run$rep.csv" | tee "$out/run$rep.txt"
  "$build/tools/model/hytask-model" "$out/trace$rep.json" | tee "$out/model$rep.txt"
done
python3 - "$out" "$reps" <<'PY'
import csv, re, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
# Which of the model's schemes each variant is.
scheme = {"masteronly": "masteronly (the trace)", "hybrid-blocking": "masteronly (the trace)",
          "hybrid-nonblocking": "funneled", "hybrid-reserve": "overlap-funnel-reserve",
          "commtask": "hytask tasks", "dataflow": "hytask tasks"}
rows = {}
fr = []
for r in range(1, reps + 1):
    pred = {}
    text = open(f"{out}/model{r}.txt").read()
    for line in text.splitlines():
        m = re.match(r"^(masteronly \(the trace\)|funneled|overlap-funnel-reserve|hytask tasks)\s.*?([0-9.]+)x$", line)
        if m: pred[m.group(1)] = float(m.group(2))
        m = re.match(r"^all\s+\d+\s+[0-9.]+\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)", line)
        if m: fr.append(tuple(float(x) for x in m.groups()))
    t = {}
    for c in csv.DictReader(open(f"{out}/run{r}.csv")):
        name = c["variant"] + (f" tests={c['tests']}" if c["tests"] else "")
        t[name] = float(c["ms_per_iter"])
    base = t["masteronly"]
    for name, ms in t.items():
        v = name.split()[0]
        p = pred[scheme[v]]
        rows.setdefault(name, []).append((ms, base / ms, p))
print("load average before each job: " + "; ".join(
    open(f"{out}/load{r}.txt").read().split(": ")[-1].strip() for r in range(1, reps + 1)))
print(f"fractions of masteronly (f_comm, f_comp,non, f_comp,overlap) per run: " +
      "; ".join(f"{a:.3f} {b:.3f} {c:.3f}" for a, b, c in fr))
print(f"{'variant':<24} {'scheme':<24} {'ms/iter':>8} {'measured eps':>13} {'predicted':>10} {'error':>8}")
for name, v in rows.items():
    ms = statistics.median(x[0] for x in v)
    meas = statistics.median(x[1] for x in v)
    pred = statistics.median(x[2] for x in v)
    print(f"{name:<24} {scheme[name.split()[0]]:<24} {ms:8.2f} {meas:13.3f} {pred:10.2f} {100 * (pred / meas - 1):+7.1f}%"
          f"   (runs: {', '.join(f'{x[1]:.3f}' for x in v)})")
PY
