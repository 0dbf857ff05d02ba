#!/usr/bin/env bash
# The hpl measurements of docs/benchmarks.md: hytask's three HPL variants beside HPCC's HPL
# (Debian's hpcc, Open MPI, OpenBLAS) with the same N, NB and P x Q, on one node (2 ranks,
# one per core) and on the cluster in a box (2 nodes of 1 core, 1 rank each), plus the
# perturbations of Marjanović et al.: OS noise and bandwidth dilation. Each repetition runs
# every job back to back, so that medians compare runs measured side by side.
#
#   bench/run_hpl_bench.sh [OUTDIR]        (as root for the cluster)
#
# Environment: REPS (3), NS ("6000 8000": the orders, each with its own HPCC run), NB (128),
# WHERE ("node cluster": which of the two to run), NOISE (500,3000: 500 ms every 3 s, as
# the paper; "" skips), NOISE_WHERE (cluster), NOISE_N (8000), NOISE_THREADS ("1 2": the
# tasks variant's workers per rank in the noise runs), DILATION (0: skips; 3: a quarter of
# the bandwidth), RATE (1gbit), MTU (9000), LARGE_N (0; N > 0 adds lookahead and tasks at
# that N with --peak on the node), BEFORE (another hpl binary whose tasks variant runs beside,
# e.g. a build of the commit before), LOCK (a file: every job runs under `flock -x LOCK`,
# so that a machine shared with others is quiet during each job and free between them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}
out=${1:-$build/hpl-bench}
reps=${REPS:-3} ns=${NS:-6000 8000} nb=${NB:-128} large=${LARGE_N:-0}
rate=${RATE:-1gbit} mtu=${MTU:-9000} noise=${NOISE-500,3000} dil=${DILATION:-0}
noise_where=${NOISE_WHERE:-cluster} noise_n=${NOISE_N:-8000} noise_threads=${NOISE_THREADS:-1 2}
where_list=${WHERE:-node cluster} before=${BEFORE:-} lock=${LOCK:-}
hpl=$build/apps/hpl/hpl
cluster="$root/scripts/cluster.sh"
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
rm -f "$out"/*.csv "$out"/*.txt
command -v hpcc >/dev/null || { echo "hpcc is missing: apt-get install hpcc" >&2; exit 2; }
echo "OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-} (unset: OpenBLAS chooses)" | tee "$out/environment.txt"

locked() { if [[ -n $lock ]]; then flock -x "$lock" "$@"; else "$@"; fi; }

# launch WHERE PROG ARGS...: WHERE is node (2 ranks on this machine, one per core) or
# cluster (2 namespaces joined by a $rate link, 1 core and 1 rank each).
launch() {
  local where=$1; shift
  if [[ $where == node ]]; then
    locked mpiexec -n 2 --bind-to core "$@"
  else
    locked timeout 1800 "$cluster" run --mpi openmpi -n 2 --rate "$rate" --mtu "$mtu" -- "$@"
  fi
}

# ours TAG WHERE N HPL-OPTIONS...: one hpl job (HPL=another binary), its CSV tagged.
ours() {
  local tag=$1 where=$2 n=$3; shift 3
  echo "== $tag ($where): hpl -N $n --nb $nb $*"
  launch "$where" "${HPL:-$hpl}" -N "$n" --nb "$nb" -P 1 -Q 2 --csv "$out/$tag.csv" "$@" 2>&1 \
    | tee "$out/$tag.txt" | grep -E '^(simple|lookahead|tasks) |DGEMM peak|^tasks: packing' || true
}

# hpcc TAG WHERE N: HPCC with its HPL at the same N, NB and grid (its other benchmarks run
# too; only HPL's figure is used). Its CSV has the columns of hpl's.
hpcc_run() {
  local tag=$1 where=$2 n=$3 dir
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

# Tags: WHERE-N.KIND.REP; KIND base (the three variants), hpcc, before (BEFORE's tasks),
# noise / base<T> / noise<T> (tasks with T workers per rank), dilation.
for rep in $(seq 1 "$reps"); do
  for where in $where_list; do
    for n in $ns; do
      hpcc_run "$where-$n.hpcc.$rep" "$where" "$n"
      ours "$where-$n.base.$rep" "$where" "$n" --variant simple,lookahead,tasks
      [[ -z $before ]] || HPL=$before ours "$where-$n.before.$rep" "$where" "$n" --variant tasks
    done
    if [[ -n $noise && " $noise_where " == *" $where "* ]]; then
      n=$noise_n
      for t in $noise_threads; do
        # lookahead has one thread whatever T; it runs beside the T = 1 jobs only.
        v=tasks; ((t == 1)) && v=lookahead,tasks
        kind=noise$t base=base$t
        ((t == 1)) && { kind=noise base=base; }
        [[ $base == base && " $ns " == *" $n "* ]] || ours "$where-$n.$base.$rep" "$where" "$n" --variant "$v" --threads "$t"
        ours "$where-$n.$kind.$rep" "$where" "$n" --variant "$v" --threads "$t" --noise "$noise"
      done
    fi
    if [[ $dil != 0 ]]; then
      for n in $ns; do ours "$where-$n.dilation.$rep" "$where" "$n" --variant lookahead,tasks --dilation "$dil"; done
    fi
  done
done
if ((large > 0)); then
  hpcc_run "node-$large.hpcc.1" node "$large"
  ours "node-$large.base.1" node "$large" --variant lookahead,tasks --peak
fi

# Summary: medians per (configuration, variant) over the repetitions, tasks / HPCC per
# repetition, and each perturbation's slowdown.
for f in "$out"/*.csv; do
  tag=$(basename "$f" .csv)
  tail -n +2 "$f" | sed "s|^|${tag%.*},${tag##*.},|"
done >"$out/all.csv"
awk -F, -v noise="${noise%,*} ms every ${noise#*,} ms" -v dil="$dil" '
  function median(list,   n, v, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; ++i) { t = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > t; --j) v[j + 1] = v[j]; v[j + 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  {
    # config = WHERE-N.KIND, rep, variant, n, nb, p, q, threads, ..., seconds ($14), gflops ($15), peak ($16), residual, status ($18)
    split($1, c, "."); w = c[1]; kind = c[2]; key = w SUBSEP kind SUBSEP $3
    if (!(key in t)) order[++n] = key
    if (!(w in seen)) { seen[w] = 1; wl[++nw] = w }
    t[key] = t[key] " " $14; g[key] = g[key] " " $15; cnt[key]++; per[key, $2] = $15
    if (rep_max < $2 + 0) rep_max = $2 + 0
    if ($16 != "") pk[key] = pk[key] " " $16
    if ($18 != "PASSED") bad[key] = bad[key] " " $18
  }
  END {
    printf "%-14s %-9s %-10s %9s %9s %5s   %s\n", "where-N", "run", "variant", "seconds", "Gflop/s", "runs", "Gflop/s per repetition"
    for (i = 1; i <= n; ++i) {
      split(order[i], k, SUBSEP)
      T[order[i]] = median(t[order[i]]); G[order[i]] = median(g[order[i]])
      reps = ""; for (r = 1; r <= rep_max; ++r) if ((order[i], r) in per) reps = reps sprintf(" %.2f", per[order[i], r])
      printf "%-14s %-9s %-10s %9.2f %9.2f %5d  %s%s\n", k[1], k[2], k[3], T[order[i]], G[order[i]], cnt[order[i]], reps, bad[order[i]] ? "  NOT PASSED:" bad[order[i]] : ""
    }
    print ""
    for (x = 1; x <= nw; ++x) {
      w = wl[x]; h = w SUBSEP "hpcc" SUBSEP "hpcc"; tk = w SUBSEP "base" SUBSEP "tasks"
      if ((h in G) && (tk in G)) {
        reps = ""; for (r = 1; r <= rep_max; ++r) if (((h, r) in per) && ((tk, r) in per)) reps = reps sprintf(" %.3f", per[tk, r] / per[h, r])
        printf "%s: tasks %.2f Gflop/s vs HPCC HPL %.2f: %.3fx (medians); per repetition:%s\n", w, G[tk], G[h], G[tk] / G[h], reps
      }
      b4 = w SUBSEP "before" SUBSEP "tasks"
      if ((b4 in G) && (tk in G)) printf "%s: tasks %.2f Gflop/s vs BEFORE tasks %.2f: %.3fx\n", w, G[tk], G[b4], G[tk] / G[b4]
      if ((tk in pk) && (tk in G)) printf "%s: DGEMM peak measured in the job %.2f Gflop/s; tasks at %.1f%% of it\n", w, median(pk[tk]), 100 * G[tk] / median(pk[tk])
    }
    for (x = 1; x <= nw; ++x) {
      w = wl[x]
      for (q = 1; q <= 4; ++q) {
        split("noise dilation noise2 noise4", P, " "); p = P[q]; b = (p ~ /^noise[0-9]/) ? "base" substr(p, 6) : "base"
        what = p == "dilation" ? "f = " dil : noise
        la0 = T[w SUBSEP b SUBSEP "lookahead"]; la1 = T[w SUBSEP p SUBSEP "lookahead"]
        tk0 = T[w SUBSEP b SUBSEP "tasks"]; tk1 = T[w SUBSEP p SUBSEP "tasks"]
        if (!tk0 || !tk1) continue
        st = tk1 / tk0 - 1
        if (la0 && la1) {
          sl = la1 / la0 - 1
          printf "%s %s (%s): lookahead %+.1f%%, tasks %+.1f%%: tasks/lookahead = %.2f\n", w, p, what, 100 * sl, 100 * st, (sl > 0 ? st / sl : 0)
        } else {
          la0 = T[w SUBSEP "base" SUBSEP "lookahead"]; la1 = T[w SUBSEP "noise" SUBSEP "lookahead"]
          printf "%s %s (%s): tasks with %s workers per rank %+.1f%% (%.2f -> %.2f s)", w, p, what, substr(p, 6), 100 * st, tk0, tk1
          if (la0 && la1) printf "; against lookahead %+.1f%%: tasks/lookahead = %.2f", 100 * (la1 / la0 - 1), (la1 > la0 ? st / (la1 / la0 - 1) : 0)
          printf "\n"
        }
      }
    }
  }' "$out/all.csv" | tee "$out/summary.txt"
echo "results in $out"
