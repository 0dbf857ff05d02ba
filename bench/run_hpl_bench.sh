#!/usr/bin/env bash
# The hpl measurements of docs/benchmarks.md: hytask's three HPL variants beside HPCC's HPL
# (Debian's hpcc, Open MPI, OpenBLAS) with the same N, NB and P x Q, on one node (2 ranks,
# one per core) and on the cluster in a box (2 nodes of 1 core, 1 rank each), plus seed 004's
# perturbations: OS noise and bandwidth dilation. Each repetition runs every job back to
# back, so that medians compare runs measured side by side.
#
#   bench/run_hpl_bench.sh [OUTDIR]        (as root for the cluster; ~25 minutes)
#
# Environment: REPS (3), N (8000), NB (128), LARGE_N (16000; 0 skips the large run),
# WHERE ("node cluster": which of the two to run), PERTURB (1; 0 skips noise and dilation),
# RATE (1gbit), MTU (9000), NOISE (500,3000: seed 004's 500 ms every 3 s), DILATION (3: a
# quarter of the bandwidth; at 1 both variants hide the doubled traffic at N = 8000).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
out=${1:-$build/hpl-bench}
reps=${REPS:-3} n=${N:-8000} nb=${NB:-128} large=${LARGE_N:-16000}
rate=${RATE:-1gbit} mtu=${MTU:-9000} noise=${NOISE:-500,3000} dil=${DILATION:-3}
where_list=${WHERE:-node cluster} perturb=${PERTURB:-1}
hpl=$build/apps/hpl/hpl
cluster="$root/scripts/cluster.sh"
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
rm -f "$out"/*.csv "$out"/*.txt
command -v hpcc >/dev/null || { echo "hpcc is missing: apt-get install hpcc" >&2; exit 2; }

# launch WHERE PROG ARGS...: WHERE is node (2 ranks on this machine, one per core) or
# cluster (2 namespaces joined by a $rate link, 1 core and 1 rank each).
launch() {
  local where=$1; shift
  if [[ $where == node ]]; then
    mpiexec -n 2 --bind-to core "$@"
  else
    timeout 1800 "$cluster" run --mpi openmpi -n 2 --rate "$rate" --mtu "$mtu" -- "$@"
  fi
}

# ours TAG WHERE HPL-OPTIONS...: one hpl job, its CSV tagged.
ours() {
  local tag=$1 where=$2; shift 2
  echo "== $tag ($where): hpl -N $n --nb $nb $*"
  launch "$where" "$hpl" -N "$n" --nb "$nb" -P 1 -Q 2 --csv "$out/$tag.csv" "$@" | tee "$out/$tag.txt" | grep -E '^(simple|lookahead|tasks) |DGEMM peak'
}

# hpcc TAG WHERE: HPCC with its HPL at the same N, NB and grid (its other benchmarks run too;
# only HPL's figure is used). Its CSV has the columns of hpl's.
hpcc_run() {
  local tag=$1 where=$2 dir
  dir=$(mktemp -d)
  sed -e "6s/.*/$n Ns/" -e "8s/.*/$nb NBs/" -e "11s/.*/1 Ps/" -e "12s/.*/2 Qs/" \
    /usr/share/doc/hpcc/examples/_hpccinf.txt >"$dir/hpccinf.txt"
  echo "== $tag ($where): hpcc, HPL -N $n --nb $nb 1 x 2"
  (cd "$dir" && launch "$where" hpcc >/dev/null 2>&1) || echo "== $tag: hpcc exited with status $?"
  local t g star
  t=$(sed -n 's/^HPL_time=//p' "$dir/hpccoutf.txt")
  g=$(sed -n 's/^HPL_Tflops=//p' "$dir/hpccoutf.txt")
  star=$(sed -n 's/^StarDGEMM_Gflops=//p' "$dir/hpccoutf.txt")
  grep -A4 '^T/V' "$dir/hpccoutf.txt" | grep -E '^WR|PASSED|FAILED' | tee "$out/$tag.txt"
  echo "StarDGEMM_Gflops=$star (per process)" | tee -a "$out/$tag.txt"
  echo "variant,n,nb,p,q,threads,window,update_blocks,dilation,noise_burst_ms,noise_period_ms,seconds,gflops,peak_gflops,residual,status" >"$out/$tag.csv"
  awk -v n="$n" -v nb="$nb" -v t="$t" -v g="$g" -v s="$star" 'BEGIN {
    printf "hpcc,%d,%d,1,2,1,,,0,0,0,%s,%.4f,%.4f,,PASSED\n", n, nb, t, g * 1000, 2 * s }' >>"$out/$tag.csv"
  rm -rf "$dir"
}

b=${noise%,*} p=${noise#*,}
for rep in $(seq 1 "$reps"); do
  for where in $where_list; do
    hpcc_run "$where.hpcc.$rep" $where
    ours "$where.base.$rep" $where --variant simple,lookahead,tasks
    if ((perturb)); then
      ours "$where.noise.$rep" $where --variant lookahead,tasks --noise "$noise"
      ours "$where.dilation.$rep" $where --variant lookahead,tasks --dilation "$dil"
    fi
  done
done
if ((large > 0)); then
  n=$large hpcc_run "node-large.hpcc.1" node
  n=$large ours "node-large.base.1" node --variant lookahead,tasks --peak
fi

# Summary: medians per (configuration, variant) over the repetitions.
for f in "$out"/*.csv; do
  tag=$(basename "$f" .csv)
  config=${tag%.*}
  tail -n +2 "$f" | sed "s|^|$config,|"
done >"$out/all.csv"
awk -F, -v noise="$b ms every $p ms" -v dil="$dil" '
  function median(list,   n, v, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; ++i) { t = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > t; --j) v[j + 1] = v[j]; v[j + 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  {
    split($1, c, "."); where = c[1]; kind = c[2]; key = where SUBSEP kind SUBSEP $2
    if (!(key in t)) order[++n] = key
    t[key] = t[key] " " $13; g[key] = g[key] " " $14; cnt[key]++
    if ($15 != "") pk[key] = pk[key] " " $15
    if ($17 != "PASSED") bad[key] = bad[key] " " $17
  }
  END {
    printf "%-12s %-9s %-10s %9s %9s %7s\n", "where", "run", "variant", "seconds", "Gflop/s", "runs"
    for (i = 1; i <= n; ++i) {
      split(order[i], k, SUBSEP)
      T[order[i]] = median(t[order[i]]); G[order[i]] = median(g[order[i]])
      printf "%-12s %-9s %-10s %9.2f %9.2f %7d%s\n", k[1], k[2], k[3], T[order[i]], G[order[i]], cnt[order[i]], bad[order[i]] ? "  NOT PASSED:" bad[order[i]] : ""
    }
    print ""
    split("node cluster node-large", W, " ")
    for (w = 1; w <= 3; ++w) {
      h = W[w] SUBSEP "hpcc" SUBSEP "hpcc"; tk = W[w] SUBSEP "base" SUBSEP "tasks"
      sm = W[w] SUBSEP "base" SUBSEP "simple"
      if ((h in G) && (tk in G))
        printf "%s: tasks %.2f Gflop/s vs HPCC HPL %.2f: %.3fx (target >= 1.05)\n", W[w], G[tk], G[h], G[tk] / G[h]
      if ((sm in G) && (tk in G))
        printf "%s: tasks %.2f Gflop/s vs simple %.2f: %.3fx (target >= 1.0)\n", W[w], G[tk], G[sm], G[tk] / G[sm]
    }
    tk = "node-large" SUBSEP "base" SUBSEP "tasks"
    if (tk in pk) printf "node-large: tasks %.2f Gflop/s = %.1f%% of the DGEMM peak %.2f measured in the same job (target >= 85%%); HPCC StarDGEMM x 2 = %.2f\n", G[tk], 100 * G[tk] / median(pk[tk]), median(pk[tk]), median(pk["node-large" SUBSEP "hpcc" SUBSEP "hpcc"])
    for (w = 1; w <= 2; ++w) {
      split("noise dilation", P, " ")
      for (q = 1; q <= 2; ++q) {
        la0 = T[W[w] SUBSEP "base" SUBSEP "lookahead"]; tk0 = T[W[w] SUBSEP "base" SUBSEP "tasks"]
        la1 = T[W[w] SUBSEP P[q] SUBSEP "lookahead"]; tk1 = T[W[w] SUBSEP P[q] SUBSEP "tasks"]
        if (!la0 || !la1 || !tk0 || !tk1) continue
        sl = la1 / la0 - 1; st = tk1 / tk0 - 1
        printf "%s %s (%s): lookahead %+.1f%%, tasks %+.1f%%: tasks/lookahead = %.2f (target <= 0.33)\n", W[w], P[q], (q == 1 ? noise : "f = " dil), 100 * sl, 100 * st, (sl > 0 ? st / sl : 0)
      }
    }
  }' "$out/all.csv" | tee "$out/summary.txt"
echo "results in $out"
