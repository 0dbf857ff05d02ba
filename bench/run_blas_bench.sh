#!/usr/bin/env bash
# The "BLAS and the CPU" measurements of docs/benchmarks.md: the same jobs under each of
# OpenBLAS's kernel sets (OPENBLAS_CORETYPE), interleaved round by round: the apps' DGEMM peak
# (--peak: every rank runs single-threaded DGEMMs at once), apps/cholesky (hytask, ScaLAPACK's
# pdpotrf and StarPU-MPI in one job), apps/hpl's tasks variant and HPCC's HPL (Debian's hpcc,
# which reaches the same OpenBLAS through libblas.so.3). 2 ranks, one per core, Open MPI.
# Writes every job's output and CSV to OUTDIR, then a Markdown table of medians.
#
#   bench/run_blas_bench.sh [OUTDIR]        (~25 minutes on 2 cores)
#
# Environment: REPS (3), CORES ("Prescott Haswell SkylakeX default": the OPENBLAS_CORETYPE of
# each column; default = unset, OpenBLAS's own choice for this CPU), CHOL_N (4096), CHOL_NB
# (256), HPL_N (8000), HPL_NB (128), HPCC (1; 0 skips HPCC's HPL).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
out=${1:-$build/blas-bench}
reps=${REPS:-3} cores=${CORES:-Prescott Haswell SkylakeX default}
chol_n=${CHOL_N:-4096} chol_nb=${CHOL_NB:-256} hpl_n=${HPL_N:-8000} hpl_nb=${HPL_NB:-128} with_hpcc=${HPCC:-1}
chol=$build/apps/cholesky/cholesky hpl=$build/apps/hpl/hpl
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 STARPU_SILENT=1
[[ -x $chol && -x $hpl ]] || { echo "missing $chol or $hpl: build first (scripts/setup.sh)" >&2; exit 1; }
if ((with_hpcc)); then
  command -v hpcc >/dev/null || { echo "hpcc is missing: apt-get install hpcc (or HPCC=0)" >&2; exit 2; }
fi
mkdir -p "$out"
rm -f "$out"/*.csv "$out"/*.txt
echo "environment: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-(unset)}; CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)" |
  tee "$out/environment.txt"

# with CORE CMD...: CMD with OPENBLAS_CORETYPE=CORE, or without it for "default".
with() {
  local core=$1; shift
  if [[ $core == default ]]; then (unset OPENBLAS_CORETYPE; "$@"); else (export OPENBLAS_CORETYPE=$core; "$@"); fi
}
launch() { mpiexec --oversubscribe --bind-to core -n 2 "$@"; }

hpcc_run() {  # TAG CORE: HPCC with its HPL at hpl's N, NB and 1 x 2 grid; a one-row CSV
  local tag=$1 core=$2 dir
  dir=$(mktemp -d)
  sed -e "6s/.*/$hpl_n Ns/" -e "8s/.*/$hpl_nb NBs/" -e "11s/.*/1 Ps/" -e "12s/.*/2 Qs/" \
    /usr/share/doc/hpcc/examples/_hpccinf.txt >"$dir/hpccinf.txt"
  (cd "$dir" && with "$core" mpiexec --oversubscribe --bind-to core -n 2 hpcc >/dev/null 2>&1) ||
    echo "== $tag: hpcc exited with status $?"
  local g
  g=$(sed -n 's/^HPL_Tflops=//p' "$dir/hpccoutf.txt")
  cp "$dir/hpccoutf.txt" "$out/$tag.txt"
  awk -v g="$g" 'BEGIN { printf "hpcc,%.4f\n", g * 1000 }' >"$out/$tag.csv"
  rm -rf "$dir"
}

for rep in $(seq 1 "$reps"); do
  for core in $cores; do
    echo "== round $rep, OPENBLAS_CORETYPE=$core (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    with "$core" launch "$chol" -N "$chol_n" --nb "$chol_nb" --peak --csv "$out/chol.$core.$rep.csv" \
      >"$out/chol.$core.$rep.txt" 2>&1
    grep -E '^(BLAS:|DGEMM peak:|hytask |scalapack |starpu )' "$out/chol.$core.$rep.txt" | sed 's/^/  /'
    with "$core" launch "$hpl" -N "$hpl_n" --nb "$hpl_nb" -P 1 -Q 2 --variant tasks --peak \
      --csv "$out/hpl.$core.$rep.csv" >"$out/hpl.$core.$rep.txt" 2>&1
    grep -E '^(DGEMM peak:|tasks )' "$out/hpl.$core.$rep.txt" | sed 's/^/  /'
    if ((with_hpcc)); then
      hpcc_run "hpcc.$core.$rep" "$core"
      sed 's/^hpcc,/  hpcc HPL Gflop\/s: /' "$out/hpcc.$core.$rep.csv"
    fi
  done
done

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "–"; else if (NR % 2) printf "%.1f\n", v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# col FILES... FIELD VARIANT: the FIELD-th column of the rows of VARIANT.
col() {
  local field=$1 variant=$2; shift 2
  cat "$@" 2>/dev/null | awk -F, -v f="$field" -v v="$variant" '$1 == v { print $f }'
}

{
  echo
  echo "Medians of $reps rounds; Gflop/s. DGEMM peak: 2 ranks x 1 single-threaded DGEMM at once (cholesky's: order max(NB, 512), B transposed; hpl's: order 1536)."
  printf '| OPENBLAS_CORETYPE | kernels | DGEMM peak (cholesky) | DGEMM peak (hpl) | cholesky hytask | ScaLAPACK | StarPU-MPI | hpl tasks | HPCC HPL |\n'
  printf '|---|---|---:|---:|---:|---:|---:|---:|---:|\n'
  for core in $cores; do
    kernels=$(sed -n 's/^BLAS: .*; kernels \([^ ]*\) .*/\1/p' "$out/chol.$core.1.txt" | head -1)
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$core" "${kernels:-?}" \
      "$(col 10 hytask "$out"/chol."$core".*.csv | median)" "$(col 14 tasks "$out"/hpl."$core".*.csv | median)" \
      "$(col 9 hytask "$out"/chol."$core".*.csv | median)" "$(col 9 scalapack "$out"/chol."$core".*.csv | median)" \
      "$(col 9 starpu "$out"/chol."$core".*.csv | median)" "$(col 13 tasks "$out"/hpl."$core".*.csv | median)" \
      "$(col 2 hpcc "$out"/hpcc."$core".*.csv | median)"
  done
} | tee "$out/summary.md"
