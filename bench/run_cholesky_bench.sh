#!/usr/bin/env bash
# The Cholesky measurements of docs/benchmarks.md: apps/cholesky's three variants — hytask
# (global dependencies), ScaLAPACK's pdpotrf and StarPU-MPI — in one job each, on the same
# matrix, grid and tiles, their runs interleaved (--repeat), on one node (2 ranks, one per
# core) and on the cluster in a box (2 namespaces joined by a 1 Gbit/s link, 1 core each).
# Writes every job's CSV and output to OUTDIR, then a Markdown table of medians and a plot
# (Gflop/s against N, one curve per variant, at each variant's best tile size).
#
#   bench/run_cholesky_bench.sh [OUTDIR]        (as root for the cluster; ~25 minutes)
#
# Environment: REPS (3), SIZES ("2048 4096 8192 16384"), NBS ("256 512": every variant at each,
# for N >= 8192; smaller N use 256), CLUSTER_N (8192; 0 skips the cluster), RATE (1gbit),
# PLOT (docs/img/cholesky.png, relative to the repository).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
out=${1:-$build/cholesky-bench}
reps=${REPS:-3} sizes=${SIZES:-2048 4096 8192 16384} nbs=${NBS:-256 512}
cluster_n=${CLUSTER_N:-8192} rate=${RATE:-1gbit}
plot=${PLOT:-$root/docs/img/cholesky.png}
chol=$build/apps/cholesky/cholesky
chol_mpich=$build/apps/cholesky/cholesky-mpich
# shellcheck source=dense_jobs.sh
source "$root/bench/dense_jobs.sh"
# shellcheck disable=SC2034 # read by dense_job
dense_rate=$rate
[[ -x $chol ]] || { echo "missing $chol: build first (scripts/setup.sh)" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/*.csv "$out"/*.txt

# job TAG WHERE MPI OPTIONS...: one cholesky job; WHERE is node (2 ranks here) or cluster (2
# nodes of the cluster in a box).
job() {
  local tag=$1 where=$2 mpi=$3; shift 3
  local exe=$chol
  [[ $mpi == mpich ]] && exe=$chol_mpich
  dense_job "$out" "$tag" "$where:2" "$mpi" "$exe" "$@"
}

for n in $sizes; do
  list=256
  ((n >= 8192)) && list=$nbs
  for nb in $list; do
    job "node-openmpi-n$n-nb$nb" node openmpi -N "$n" --nb "$nb" --repeat "$reps" --peak
  done
done
# MPI_Dims_create's own grid (2 x 1) at the largest size, and MPICH (no StarPU-MPI there).
largest=${sizes##* }
job "node-openmpi-n$largest-nb512-2x1" node openmpi -N "$largest" --nb 512 -P 2 -Q 1 --repeat "$reps" --peak
[[ -x $chol_mpich ]] && job "node-mpich-n8192-nb512" node mpich -N 8192 --nb 512 --repeat "$reps" --peak
if ((cluster_n > 0)); then
  for nb in $nbs; do
    job "cluster-openmpi-n$cluster_n-nb$nb" cluster openmpi -N "$cluster_n" --nb "$nb" --repeat "$reps"
    [[ -x $chol_mpich ]] && job "cluster-mpich-n$cluster_n-nb$nb" cluster mpich -N "$cluster_n" --nb "$nb" --repeat "$reps"
  done
fi

# The table: per job and variant, the median Gflop/s of the runs, and the ratios.
python3 - "$out" "$plot" <<'EOF'
import csv, glob, os, statistics, subprocess, sys
out, plot = sys.argv[1], sys.argv[2]
rows = {}
for f in sorted(glob.glob(os.path.join(out, '*.csv'))):
    tag = os.path.basename(f)[:-4]
    for r in csv.DictReader(open(f)):
        key = (tag, r['n'], r['nb'], r['p'] + 'x' + r['q'])
        rows.setdefault(key, {'peak': r['peak_gflops']}).setdefault(r['variant'], []).append(float(r['gflops']))
        if r['status'] not in ('PASSED', 'UNCHECKED'):
            print(f'{tag}: {r["variant"]} run {r["rep"]}: {r["status"]}', file=sys.stderr)
def med(v): return statistics.median(v) if v else None
print('| job | N | NB | grid | hytask | ScaLAPACK | StarPU-MPI | hytask / ScaLAPACK | hytask / StarPU | hytask / DGEMM peak |')
print('|---|---:|---:|---|---:|---:|---:|---:|---:|---:|')
best = {}
for (tag, n, nb, grid), d in sorted(rows.items(), key=lambda x: (x[0][0].split('-n')[0], int(x[0][1]), int(x[0][2]))):
    h, s, p = med(d.get('hytask', [])), med(d.get('scalapack', [])), med(d.get('starpu', []))
    peak = float(d['peak']) if d['peak'] else None
    f = lambda x: f'{x:.1f}' if x else '–'
    r = lambda a, b: f'{a / b:.2f}×' if a and b else '–'
    print(f'| {tag} | {n} | {nb} | {grid} | {f(h)} | {f(s)} | {f(p)} | {r(h, s)} | {r(h, p)} | '
          f'{(f"{100 * h / peak:.0f} %" if h and peak else "–")} |')
    if tag.startswith('node-openmpi') and grid != '2x1':
        for v, x in (('hytask', h), ('scalapack', s), ('starpu', p)):
            if x: best[(v, int(n))] = max(best.get((v, int(n)), 0), x)
# The plot: Gflop/s against N on one node, each variant at its best tile size.
data = os.path.join(out, 'plot.dat')
with open(data, 'w') as fh:
    for v in ('hytask', 'scalapack', 'starpu'):
        fh.write(f'# {v}\n')
        for (vv, n), x in sorted(best.items(), key=lambda y: y[0][1]):
            if vv == v: fh.write(f'{n} {x:.2f}\n')
        fh.write('\n\n')
script = f'''set terminal pngcairo size 800,500 font ",11"
set output "{plot}"
set title "Tiled Cholesky, 2 ranks on one node (2 cores), best tile size of each"
set xlabel "N"
set ylabel "Gflop/s"
set logscale x 2
set key left top
set grid
plot "{data}" index 0 with linespoints lw 2 title "hytask (global dependencies)", \\
     "{data}" index 1 with linespoints lw 2 title "ScaLAPACK pdpotrf", \\
     "{data}" index 2 with linespoints lw 2 title "StarPU-MPI"
'''
try:
    subprocess.run(['gnuplot'], input=script.encode(), check=True)
    print(f'\nplot: {plot}', file=sys.stderr)
except Exception as e:
    print(f'no plot ({e})', file=sys.stderr)
EOF
