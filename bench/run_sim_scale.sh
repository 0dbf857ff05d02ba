#!/usr/bin/env bash
# Weak scaling of hytask's tiled Cholesky and QR predicted by hytask-sim (docs/scale.md): the
# apps' task graphs on 1 to 1,024 simulated ranks of 24 workers each on an EDR-class
# InfiniBand network, the tile kernels timed on this machine. Two sizes per app: the
# per-node matrix of Schuchart's runs (Cholesky 25,600² with NB 320, QR 15,360² — his 15k² to a
# multiple of NB) up to 144 ranks, and a quarter of its area up to 1,024 ranks, which keeps
# the simulation within minutes. Writes the tables (OUTDIR/*.md) and a plot of the parallel
# efficiency (OUTDIR/sim-weak-scaling.png, with gnuplot).
#
#   bench/run_sim_scale.sh [OUTDIR]          (default build/sim-scale)
#   bench/run_sim_scale.sh --quick [OUTDIR]  small sizes, 1 to 64 ranks: a smoke run
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
sim=$build/tools/sim/hytask-sim
quick=0
[[ ${1:-} == --quick ]] && { quick=1; shift; }
out=${1:-$build/sim-scale}
[[ -x $sim ]] || { echo "run_sim_scale.sh: missing $sim: cmake --build $build --target hytask-sim" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out"/*.md "$out"/*.dat
export OPENBLAS_NUM_THREADS=1
common=(--nb 320 --ib 32 --workers 24 --network ib --reps 10)
if ((quick)); then
  runs=("cholesky seed 1,4,16,64 2560" "qr seed 1,4,16 1280")
else
  runs=("cholesky seed 1,4,16,36,64,100,144 25600" "cholesky quarter 1,4,16,64,256,1024 12800"
        "qr seed 1,4,16,36,64,100,144 15360" "qr quarter 1,4,16,64,256,1024 7680")
fi
for r in "${runs[@]}"; do
  read -r app size ranks n0 <<<"$r"
  echo "== $app, $n0² per rank, ranks $ranks"
  "$sim" "$app" "${common[@]}" --ranks "$ranks" --n-per-rank "$n0" | tee "$out/$app-$n0.md"
done
command -v gnuplot >/dev/null || { echo "no gnuplot: no plot (apt-get install gnuplot-nox)"; exit 0; }
series=()
for f in "$out"/*.md; do  # ranks and efficiency; one series per app and size
  awk -F'|' '/^\| [0-9]/ { gsub(/[ %]/, "", $9); print $2, $9 }' "$f" >"${f%.md}.dat"
  name=$(basename "${f%.md}")
  series+=("'${f%.md}.dat' using 1:2 with linespoints title '${name%-*}, ${name##*-}² per rank'")
done
plots=$(IFS=,; echo "${series[*]}")
gnuplot <<PLOT
set terminal pngcairo size 820,480 font ",11"
set output "$out/sim-weak-scaling.png"
set title "hytask weak scaling, simulated: 24 workers per rank, EDR-class InfiniBand, NB 320"
set xlabel "ranks (nodes)"; set ylabel "parallel efficiency (%)"
set logscale x 2; set yrange [0:105]; set grid; set key bottom left
plot $plots
PLOT
echo "plot: $out/sim-weak-scaling.png"
