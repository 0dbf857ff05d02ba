#!/usr/bin/env bash
# hytask-sim against real runs: the hytask rows of bench/run_weak_scaling.sh's jobs (the
# cluster in a box, 1, 2 and 4 nodes), each simulated with the same application, matrix,
# grid and worker count, the link measured here (a plain MPI ping-pong between two nodes of
# the cluster in a box: latency from 8 bytes, bandwidth from 1 MiB), the machine's cores
# shared as the nodes share them, and the kernels timed on this machine. Prints a Markdown
# table: measured and simulated seconds and the simulation's error (docs/scale.md).
#
#   bench/run_sim_validation.sh [WEAK_SCALING_OUTDIR]    (as root; default build/weak-scaling)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
in=${1:-$build/weak-scaling}
rate=${RATE:-1gbit}
sim=$build/tools/sim/hytask-sim
die() { echo "run_sim_validation.sh: $*" >&2; exit 2; }
[[ -x $sim ]] || die "missing $sim: cmake --build $build --target hytask-sim"
[[ -x $build/bench/bench_mpi ]] || die "missing $build/bench/bench_mpi: cmake --build $build --target bench_mpi"
compgen -G "$in/*-p*-n*.csv" >/dev/null || die "no job CSVs in $in: run bench/run_weak_scaling.sh first"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

pingpong() {  # microseconds per round trip of plain MPI, $1 bytes
  "$root/scripts/cluster.sh" run --mpi openmpi --nodes 2 -n 2 --rate "$rate" -- \
    "$build/bench/bench_mpi" --case latency --bytes "$1" --n "$2" --reps 3 |
    sed -n 's/.*variant=plain-mpi value=\([0-9.]*\).*/\1/p'
}
small=$(pingpong 8 2000)
large=$(pingpong 1048576 40)
[[ -n $small && -n $large ]] || die "the ping-pong on the cluster in a box gave no figure"

python3 - "$in" "$sim" "$small" "$large" "$(nproc)" <<'PY'
import csv, glob, os, re, statistics, subprocess, sys
indir, sim, small, large, cores = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
o = 3.0                                      # µs per message on each side (TCP, MPI, hytask)
latency = max(small / 2 - 2 * o, 1.0)        # one way, µs
gbits = 8 * (1048576 - 8) / ((large - small) / 2 * 1e3)  # Gbit/s
print(f'link (plain MPI ping-pong, 2 nodes): {small:.1f} µs per 8-byte round trip, {large:.0f} µs per 1 MiB '
      f'one: L {latency:.1f} µs, o {o:.1f} µs, {gbits:.3f} Gbit/s; {cores} cores shared by the nodes\n')
print('| app | P | grid | N | NB | measured s (median) | simulated s | error |')
print('|---|---:|---|---:|---:|---:|---:|---:|')
rows = []
kernels = {}
def kernel_times(app, nb, ib, threads):
    # Timed once per application and number of threads at once (the ranks busy at a time:
    # one at P = 1, every core above), many runs, so that every simulation of it agrees.
    key = (app, nb, ib, threads)
    if key not in kernels:
        cmd = [sim, app, '--ranks', '1', '--n', str(nb), '--nb', str(nb), '--reps', '40',
               '--calibrate-threads', str(threads)] + (['--ib', str(ib)] if app == 'qr' else [])
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        line = next(l for l in out.splitlines() if l.startswith('kernels ('))
        kernels[key] = ','.join(line.split('):', 1)[1].split())
    return kernels[key]
for f in sorted(glob.glob(os.path.join(indir, '*-p*-n*.csv'))):
    app = os.path.basename(f).split('-p')[0]
    runs = [r for r in csv.DictReader(open(f)) if r['variant'] == 'hytask']
    if not runs:
        continue
    r0 = runs[0]
    p, q, n, nb = int(r0['p']), int(r0['q']), int(r0['n']), int(r0['nb'])
    measured = statistics.median(float(r['seconds']) for r in runs)
    cmd = [sim, app, '--grid', f'{p}x{q}', '--n', str(n), '--nb', str(nb), '--workers', r0['threads'],
           '--host-cores', str(cores), '--latency-us', f'{latency:.2f}', '--overhead-us', f'{o:.2f}',
           '--gbits', f'{gbits:.4f}',
           '--kernel-seconds', kernel_times(app, nb, int(r0.get('ib') or 0), min(p * q, cores))]
    if app == 'qr':
        cmd += ['--ib', r0['ib']]
        if r0['m'] != r0['n']:
            cmd += ['--m', r0['m']]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if re.match(rf'\| {p * q} \| {p}x{q} \|', l))
    simulated = float(line.split('|')[5])
    rows.append((app, p * q, f'{p} × {q}', n, nb, measured, simulated))
for app, ranks, grid, n, nb, m, s in sorted(rows):
    print(f'| {app} | {ranks} | {grid} | {n} | {nb} | {m:.3f} | {s:.3f} | {100 * (s - m) / m:+.1f} % |')
PY
