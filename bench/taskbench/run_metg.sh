#!/usr/bin/env bash
# METG(50%) after Task Bench (Slaughter et al., SC'20): for each pattern, each system runs
# the same task graph (bench/taskbench/graph.hpp) over a sweep of task sizes, from ~1 ms
# tasks down to 1 kernel iteration, in a fresh process per pattern and system, systems
# interleaved; with --passes N the whole set N times over, each point's figures the median
# of its passes. Prints (and writes to DIR/summary.md) the METG table, the cross-worker
# latency of every system near hytask's METG (MPI's across ranks), and plots efficiency against task
# granularity into docs/img/metg_<pattern>_w<width>.svg. docs/benchmarks.md, "Fine-grained
# task graphs", is this script's output.
#   bench/taskbench/run_metg.sh [--build build] [--width 4] [--steps 1000]
#       [--patterns "stencil_1d nearest:3 nearest:5 fft spread:3 tree trivial"]
#       [--systems "hytask hytask_graph omp_gcc omp_clang mpi"] [--reps 3] [--out DIR]
#       [--cores 2] [--top-us 1000] [--factor 1.4142] [--plots docs/img] [--no-latency]
#       [--passes 1]
#   --cores      threads of hytask and OpenMP, ranks of MPI (default: 2)
#   --top-us     the largest task, in µs of kernel time (calibrated at the start)
#   --factor     ratio between successive task sizes below 100 µs (√2; 2 halves the time);
#                above 100 µs the sweep halves the size
#   --plots      where the SVG plots go ("" for none)
#   --passes     how many times to run every pattern and system, one after the other: a
#                shared machine's slow phases last minutes, so the reps of one process
#                (seconds apart) see the same phase, and passes minutes apart do not
# Definitions: a run's FLOP/s = tasks × iterations × 48 / wall time; peak = the largest
# FLOP/s any system reached in this invocation (all patterns); efficiency = FLOP/s / peak;
# task granularity = wall time × cores / tasks; METG(50%) = Task Bench's: the smallest
# granularity at which the efficiency is still at least 50 %, interpolated linearly in
# log(granularity) between that sweep point and the next smaller one (so one disturbed run
# at a large size does not decide it). A second table takes each run's efficiency as the
# kernel's time at its speed measured alone just before that run, over the cores' time.
set -euo pipefail

build=build width=4 steps=1000 reps=3 out="" cores=2 top_us=1000 factor=1.4142135623730951
patterns="stencil_1d nearest:3 nearest:5 fft spread:3 tree trivial"
systems="hytask hytask_graph omp_gcc omp_clang mpi"
plots=docs/img latency=1 passes=1
usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//' >&2; }
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --width) width=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --patterns) patterns=$2; shift 2 ;;
    --systems) systems=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --cores) cores=$2; shift 2 ;;
    --top-us) top_us=$2; shift 2 ;;
    --factor) factor=$2; shift 2 ;;
    --plots) plots=$2; shift 2 ;;
    --no-latency) latency=0; shift ;;
    --passes) passes=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run_metg.sh: unknown argument '$1'" >&2; usage; exit 2 ;;
  esac
done

if ! [[ $passes =~ ^[1-9][0-9]*$ ]]; then
  echo "run_metg.sh: --passes must be a positive integer, not '$passes'" >&2
  exit 2
fi

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
bin="$build/bench/taskbench"
log() { printf '[run_metg] %s\n' "$*" >&2; }

# ---- The binaries and the MPI launcher ----------------------------------------------------
declare -A exe
for s in $systems; do
  case "$s" in
    hytask|hytask_graph|omp_gcc|omp_clang|mpi) exe[$s]="$bin/taskbench_$s" ;;
    *) echo "run_metg.sh: unknown system '$s' (hytask, hytask_graph, omp_gcc, omp_clang, mpi)" >&2; exit 2 ;;
  esac
  if [[ ! -x ${exe[$s]} ]]; then
    echo "run_metg.sh: missing ${exe[$s]}: build it first:" >&2
    echo "  cmake -S . -B $build -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build $build -j2" >&2
    echo "  (taskbench_omp_gcc needs GCC's OpenMP, taskbench_omp_clang clang++ and libomp-dev:" >&2
    echo "  scripts/setup.sh installs both; or leave the system out with --systems)" >&2
    exit 1
  fi
done
launcher=()
if [[ " $systems " == *" mpi "* ]]; then
  mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
  mpiexec=${mpiexec:-mpiexec}
  command -v "$mpiexec" >/dev/null || { echo "run_metg.sh: no MPI launcher '$mpiexec'" >&2; exit 1; }
  if "$mpiexec" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    launcher=("$mpiexec" -n "$cores" --bind-to core --map-by core)
  else
    launcher=("$mpiexec" -n "$cores" -bind-to core)
  fi
fi

out=${out:-$build/taskbench/metg_w${width}}
mkdir -p "$out"
[[ -n $plots ]] && mkdir -p "$plots"
raw="$out/raw.txt"
: >"$raw"

# ---- Running one process, interruptibly --------------------------------------------------
# Each process runs in the background and is waited for, so that an interrupt reaches the
# trap at once; the trap ends the process it started (timeout passes the signal on, and
# mpiexec to its ranks) and nothing else.
child=""
on_signal() {
  log "interrupted"
  [[ -n $child ]] && kill -TERM "$child" 2>/dev/null && wait "$child" 2>/dev/null
  exit 130
}
trap on_signal INT TERM

# The machine's busy and stolen CPU time (jiffies), the CPU time of this shell's finished
# children (s) and the time (s): taken around each process to measure how much CPU other
# processes (and the hypervisor: steal) took while it ran. These machines are shared.
hz=$(getconf CLK_TCK)
ncpu=$(nproc)
cpu_sample() {
  times >"$out/.times"  # a builtin: no subshell, so it sees this shell's children
  echo "$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat)" \
       "$(awk 'NR == 2 { for (i = 1; i <= 2; ++i) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } print t }' "$out/.times")" \
       "$(date +%s.%N)"
}

# run_system SYSTEM ARGS...: its output lines on stdout, then a comment line with the CPU
# share other processes and the hypervisor took meanwhile; exits the script if it fails.
run_system() {
  local s=$1 cmd
  shift
  if [[ $s == mpi ]]; then
    cmd=("${launcher[@]}" "${exe[$s]}" "$@")
  else
    cmd=("${exe[$s]}" --threads "$cores" "$@")
  fi
  local before after status=0
  cpu_sample >"$out/.before"  # not $(cpu_sample): a subshell would not see the children
  OMP_NUM_THREADS=$cores timeout 1800 "${cmd[@]}" >"$out/.stdout" 2>"$out/.stderr" &
  child=$!
  wait "$child" || status=$?
  child=""
  cpu_sample >"$out/.after"
  before=$(<"$out/.before") after=$(<"$out/.after")
  if ((status != 0)); then
    echo "run_metg.sh: failed (status $status): ${cmd[*]}" >&2
    cat "$out/.stderr" >&2
    exit 1
  fi
  cat "$out/.stdout"
  awk -v b="$before" -v a="$after" -v hz="$hz" -v n="$ncpu" -v what="$s $*" 'BEGIN {
    split(b, x, " "); split(a, y, " "); wall = (y[4] - x[4]) * n
    other = ((y[1] - x[1]) / hz - (y[3] - x[3])) / wall * 100; if (other < 0) other = 0
    printf "# cpu other=%.1f%% steal=%.1f%% (%s)\n", other, (y[2] - x[2]) / hz / wall * 100, what }'
}

c2c() {
  if [[ -x $build/bench/bench_core_to_core ]]; then
    "$build/bench/bench_core_to_core" | sed 's/.*round_trip_ns=//'
  else
    echo "n/a"
  fi
}
load() { cut -d' ' -f1-3 /proc/loadavg; }

# ---- The sweep ----------------------------------------------------------------------------
# The kernel's speed: a chain of 20 tasks (stencil_1d of width 1) of 100000 iterations.
calib=$(run_system "${systems%% *}" --pattern stencil_1d --width 1 --steps 20 --iterations 100000 --reps 3 |
        sed -nE 's/.* seconds=([0-9.e+-]+) .*/\1/p')
ns_per_iteration=$(awk -v s="$calib" 'BEGIN { printf "%.4f", s / 20 / 100000 * 1e9 }')
# From --top-us down to 1 iteration: by halves above 100 µs (those points only establish the
# plateau, and cost most of the time), by --factor below.
sweep=$(awk -v top="$top_us" -v ns="$ns_per_iteration" -v f="$factor" 'BEGIN {
  n = top * 1000 / ns; coarse = 100 * 1000 / ns; last = -1; out = ""
  for (x = n; x >= 1; x /= (x > coarse * 1.01 ? 2 : f)) {
    v = int(x + 0.5); if (v != last) { out = out (out ? "," : "") v; last = v } }
  if (last != 1) out = out (out ? "," : "") 1
  print out }')
log "kernel: $ns_per_iteration ns per iteration; sweep: $sweep"

c2c_before=$(c2c)
c2c_during=""
load_before=$(load)
started=$(date +%s)
{
  echo "# run_metg.sh --width $width --steps $steps --reps $reps --cores $cores --patterns \"$patterns\" --systems \"$systems\" --passes $passes"
  echo "# $(date -u +%FT%TZ) $(uname -n); kernel $ns_per_iteration ns per iteration; round trip before: $c2c_before ns; load before: $load_before"
} >>"$raw"

read -ra rotation <<<"$systems"
for ((pass = 1; pass <= passes; ++pass)); do
  for p in $patterns; do
    for s in "${rotation[@]}"; do
      log "pass $pass of $passes, $p: $s"
      run_system "$s" --pattern "$p" --width "$width" --steps "$steps" --iterations "$sweep" --reps "$reps" >>"$raw"
    done
    # Interleave: the next pattern starts with the next system.
    rotation=("${rotation[@]:1}" "${rotation[0]}")
    # The guest's phase can change in the middle of a sweep (the round trip between the two
    # CPUs rises from ~60 ns to ~340 for minutes): sample it between patterns too.
    rt=$(c2c)
    c2c_during+=" $rt"
    echo "# round trip after pass $pass, $p: $rt ns" >>"$raw"
  done
done
c2c_after=$(c2c)
load_after=$(load)
echo "# round trip after: $c2c_after ns; load after: $load_after; $(( $(date +%s) - started )) s" >>"$raw"

# ---- METG, efficiency, the table ---------------------------------------------------------
# analysis.txt: pattern system iterations granularity_us efficiency first_seconds first_faults
# seconds kernel_efficiency passes. A point run in several passes has the medians of its
# granularity, FLOP/s, seconds and kernel efficiency over the passes (each already the median
# of its process's reps); its first graph is the first pass's. The peak is the largest of
# those medians.
awk '
  function median(list,   a, m, i, j, t) {
    m = split(list, a, " ")
    for (i = 2; i <= m; ++i) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; --j) a[j + 1] = a[j]; a[j + 1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
  /^#/ { next }
  { delete v; for (i = 1; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
    key = v["pattern"] SUBSEP v["system"] SUBSEP v["iterations"]
    if (!(key in np)) { n++; order[n] = key; pat[key] = v["pattern"]; sys[key] = v["system"]
      it[key] = v["iterations"]; fsec[key] = v["first_seconds"]; ffl[key] = v["first_faults"] }
    np[key]++; gran[key] = gran[key] " " v["granularity_us"]; gf[key] = gf[key] " " v["gflops"]
    sec[key] = sec[key] " " v["seconds"]; ke[key] = ke[key] " " v["kernel_efficiency"] }
  END { for (k = 1; k <= n; ++k) { key = order[k]; mg[key] = median(gf[key]); if (mg[key] > peak) peak = mg[key] }
        printf "# peak_gflops %.4f\n", peak
        for (k = 1; k <= n; ++k) { key = order[k]
          printf "%s %s %s %s %.6f %s %s %s %s %d\n", pat[key], sys[key], it[key], median(gran[key]),
            mg[key] / peak, fsec[key], ffl[key], median(sec[key]), median(ke[key]), np[key] } }
' "$raw" >"$out/analysis.txt"
peak=$(sed -n 's/^# peak_gflops //p' "$out/analysis.txt")

# metg PATTERN SYSTEM [COLUMN]: the METG in µs, "not reached" or "< g" (every point above
# 50 %), of the efficiency in analysis.txt's COLUMN (5: against the peak; 9: the kernel's
# time at the speed measured beside each run, over the cores' time).
metg() {
  awk -v p="$1" -v s="$2" -v c="${3:-5}" '
    $1 == p && $2 == s { n++; g[n] = $4; e[n] = $c }
    END {
      if (n == 0) { print "n/a"; exit }
      last = 0
      for (k = 1; k <= n; ++k) if (e[k] >= 0.5) last = k
      if (last == 0) { print "not reached"; exit }
      if (last == n) { printf "< %.2f\n", g[n]; exit }
      k = last + 1
      lg = log(g[k - 1]) + (0.5 - e[k - 1]) * (log(g[k]) - log(g[k - 1])) / (e[k] - e[k - 1])
      printf "%.2f\n", exp(lg) }' "$out/analysis.txt"
}

# How much CPU other processes and the hypervisor took during the sweep's processes.
interference=$(awk '/^# cpu / { o = $3; st = $4; gsub(/[^0-9.]/, "", o); gsub(/[^0-9.]/, "", st); o += 0; st += 0
    n++; so += o; ss += st; if (o > mo) mo = o; if (st > ms) ms = st }
  END { printf "other processes took %.1f %% of the CPUs on average (at most %.1f %% during one process), the hypervisor %.1f %% (at most %.1f %%)", so / n, mo, ss / n, ms }' "$raw")
declare -A M K
for p in $patterns; do for s in $systems; do
  M[$p/$s]=$(metg "$p" "$s")
  K[$p/$s]=$(metg "$p" "$s" 9)
done; done
isnum() { [[ $1 =~ ^[0-9.]+$ ]]; }
# table NAME: the METG table of the array NAME (M or K), × MPI in brackets.
table() {
  local -n T=$1
  printf '| pattern |'; for s in $systems; do printf ' %s |' "$s"; done; echo
  printf '|---|'; for s in $systems; do printf -- '---:|'; done; echo
  for p in $patterns; do
    printf '| %s |' "$p"
    for s in $systems; do
      m=${T[$p/$s]} ref=${T[$p/mpi]:-}
      if isnum "$m" && [[ $s != mpi ]] && isnum "$ref"; then
        printf ' %s (%s×) |' "$m" "$(awk -v a="$m" -v b="$ref" 'BEGIN { printf "%.1f", a / b }')"
      else
        printf ' %s |' "$m"
      fi
    done
    echo
  done
}
# The round trips taken between patterns: their range, and how many were slow (over 150 ns,
# where a steady guest gives 50-70).
during=$(echo "$c2c_during" | awk '{ n = 0; slow = 0; lo = ""; hi = ""
  for (i = 1; i <= NF; ++i) { if ($i == "n/a") continue; v = $i + 0; n++; if (v > 150) slow++
    if (lo == "" || v < lo) lo = v; if (hi == "" || v > hi) hi = v }
  if (n == 0) print "not measured between patterns"
  else printf "%.1f-%.1f ns after each pattern of each pass (%d of %d over 150 ns, the mark of a slow phase of the guest)", lo, hi, slow, n }')
{
  echo "METG(50%) in µs (lower is better), width $width, $steps steps, $cores cores; × MPI in brackets."
  ((passes > 1)) && echo "Each point: the median of $passes passes over every pattern and system, run one after the other."
  echo "Peak: $peak GFLOP/s (the largest any system reached in this run). Round trip between"
  echo "the two CPUs (bench_core_to_core): $c2c_before ns before, $c2c_after ns after, and $during;"
  echo "load average before $load_before, after $load_after; kernel $ns_per_iteration ns per iteration."
  echo "During the sweep $interference."
  echo
  table M
  echo
  echo "The same with each run's efficiency taken as the kernel's time, at the speed measured"
  echo "alone just before that run (kernel_ns), over the cores' time: a change of the shared"
  echo "machine's speed during the sweep moves the table above, not this one."
  echo
  table K
} >"$out/summary.md"

# The first graph of each process (the first pattern's runs, at the largest task size):
# its time against the same graph's median afterwards, and its minor page faults.
first_pattern=${patterns%% *}
{
  echo
  echo "First graph of the process ($first_pattern, the largest tasks): time against the median"
  echo "of the same graph afterwards, and minor page faults (summed over ranks for MPI)."
  echo
  echo "| system | first graph | afterwards | page faults |"
  echo "|---|---:|---:|---:|"
  for s in $systems; do
    awk -v p="$first_pattern" -v s="$s" '$1 == p && $2 == s { printf "| %s | %.2f ms | %.2f ms | %s |\n", s, $6 * 1e3, $8 * 1e3, $7; exit }' "$out/analysis.txt"
  done
} >>"$out/summary.md"

# ---- Plots ---------------------------------------------------------------------------------
if [[ -n $plots ]] && command -v gnuplot >/dev/null; then
  for p in $patterns; do
    file="$plots/metg_${p//:/}_w${width}.svg"
    curves=()
    for s in $systems; do
      awk -v p="$p" -v s="$s" '$1 == p && $2 == s { print $4, $5 * 100 }' "$out/analysis.txt" >"$out/plot_${p//:/}_$s.dat"
      curves+=("'$out/plot_${p//:/}_$s.dat' using 1:2 with linespoints title '$s'")
    done
    joined=$(printf '%s, ' "${curves[@]}")
    gnuplot <<EOF
set terminal svg size 640,420 dynamic noenhanced font "sans,12" background "white"
set output "$file"
set title "$p, width $width, $steps steps, $cores cores"
set logscale x
set xlabel "task granularity (µs)"
set ylabel "efficiency (% of peak)"
set yrange [0:110]
set grid
set key bottom right
set arrow from graph 0, first 50 to graph 1, first 50 nohead dashtype 2
plot ${joined%, }
EOF
    log "plot: $file"
  done
elif [[ -n $plots ]]; then
  log "gnuplot not found: no plots (apt-get install gnuplot-nox)"
fi

# ---- Latency near hytask's METG ----------------------------------------------------------
if ((latency)); then
  lat_pattern=""
  for p in $patterns; do [[ $p != trivial ]] && { lat_pattern=$p; break; }; done
  ref=hytask
  [[ " $systems " == *" hytask "* ]] || ref=${systems%% *}
  # The sweep point of hytask whose efficiency is nearest 50 %.
  lat_iterations=$(awk -v p="$lat_pattern" -v s="$ref" '
    $1 == p && $2 == s { d = $5 - 0.5; if (d < 0) d = -d; if (best == "" || d < best) { best = d; it = $3 } }
    END { print it }' "$out/analysis.txt")
  if [[ -n $lat_pattern && -n $lat_iterations ]]; then
    : >"$out/latency.txt"
    for s in $systems; do
      log "latency: $s, $lat_pattern, $lat_iterations iterations"
      run_system "$s" --pattern "$lat_pattern" --width "$width" --steps "$steps" \
        --iterations "$lat_iterations" --reps "$reps" --latency >>"$out/latency.txt"
    done
    {
      echo
      echo "Latency ($lat_pattern, $lat_iterations kernel iterations per task: near hytask's METG; each"
      echo "system recording start and end times, so slightly slower): from the end of a task's"
      echo "last-finishing predecessor to its start, when the two ran on different workers"
      echo "(cross; for MPI, different ranks) and on the same one (same). Last of $reps runs."
      echo
      echo "| system | granularity | efficiency | cross median | cross p99 | cross samples | same median | same p99 | same samples |"
      echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
      awk -v peak="$peak" '/^#/ { next } { delete v; for (i = 1; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
        printf "| %s | %.2f µs | %.0f %% | %s ns | %s ns | %s | %s ns | %s ns | %s |\n", v["system"], v["granularity_us"],
          v["gflops"] / peak * 100, v["xlat_median_ns"], v["xlat_p99_ns"], v["xlat_samples"],
          v["slat_median_ns"], v["slat_p99_ns"], v["slat_samples"] }' "$out/latency.txt"
    } >>"$out/summary.md"
  fi
fi

rm -f "$out/.stdout" "$out/.stderr" "$out/.times" "$out/.before" "$out/.after"
echo "Raw lines: $raw; took $(( $(date +%s) - started )) s." >>"$out/summary.md"
awk '/^# cpu / { o = $3; gsub(/[^0-9.]/, "", o); if (o + 0 > 5) n++ }
  END { if (n) print "warning: other processes took more than 5 % of the CPUs during " n " of the runs (# cpu lines in raw.txt): their figures are not reliable" }' "$raw" >&2
cat "$out/summary.md"
