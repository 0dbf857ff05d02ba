#!/usr/bin/env bash
# Weak scaling of the dense apps on the cluster in a box: apps/cholesky and apps/qr at a fixed
# matrix area per rank (N = N0·sqrt(P), rounded to a multiple of NB) on 1, 2 and 4 nodes,
# each node one rank with one worker and one core's share (scripts/cluster.sh), the nodes
# joined by bandwidth-limited links. Each job runs hytask, ScaLAPACK (pdpotrf, pdgeqrf) and
# StarPU-MPI on the same matrix, their runs interleaved (--repeat). Prints a Markdown table
# per app: P, N, each system's Gflop/s (median of its runs) and its weak-scaling efficiency,
# the rate per rank at P divided by the rate at P = 1 (at the smallest P of the list when 1
# is not in it). Keeps every job's CSV and output, and the tables, in OUTDIR.
#
#   bench/run_weak_scaling.sh [options] [OUTDIR]     (as root, for the namespaces)
#   bench/run_weak_scaling.sh --quick --nodes 1,2    a smoke run: tiny matrices, checked
#
# The StarPU-MPI variants exist in the Open MPI builds only (Debian's StarPU-MPI), so the
# jobs use Open MPI. A machine with fewer cores than nodes oversubscribes: the script says so.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HYTASK_BUILD_DIR:-$root/build}

usage() {
  cat <<EOF
usage: bench/run_weak_scaling.sh [options] [OUTDIR]   (default OUTDIR: $build/weak-scaling)

  --n0 N0        order of the matrix at P = 1 (default 4096); at P nodes N = N0·sqrt(P),
                 rounded to a multiple of NB
  --nb NB        tile size, also ScaLAPACK's block size (default 256)
  --ib IB        inner block of QR's tile kernels (default 32)
  --reps R       runs of each variant per job, interleaved (default 3)
  --nodes LIST   node counts, comma-separated (default 1,2,4)
  --apps LIST    cholesky, qr, comma-separated (default cholesky,qr)
  --rate RATE    bandwidth of the links, as tc understands it (default 1gbit)
  --no-check     skip the checks (by default every job checks its last run; QR's check
                 gathers the matrix on rank 0 and is skipped above N = $qr_check_max)
  --local        no namespaces: every node is a rank on plain localhost (shared memory)
  --quick        a smoke run: N0 256, NB 64, IB 16, 1 run (options after it still apply)
  -h, --help     this text
EOF
}

n0=4096 nb=256 ib=32 reps=3 nodes_list=1,2,4 apps=cholesky,qr rate=1gbit check=1 local=0 out=""
qr_check_max=4096
die() { echo "run_weak_scaling.sh: $*" >&2; exit 2; }
while (($#)); do
  case $1 in
    --n0) [[ $# -ge 2 ]] || die "--n0 needs a value"; n0=$2; shift 2 ;;
    --nb) [[ $# -ge 2 ]] || die "--nb needs a value"; nb=$2; shift 2 ;;
    --ib) [[ $# -ge 2 ]] || die "--ib needs a value"; ib=$2; shift 2 ;;
    --reps) [[ $# -ge 2 ]] || die "--reps needs a value"; reps=$2; shift 2 ;;
    --nodes) [[ $# -ge 2 ]] || die "--nodes needs a list"; nodes_list=$2; shift 2 ;;
    --apps) [[ $# -ge 2 ]] || die "--apps needs a list"; apps=$2; shift 2 ;;
    --rate) [[ $# -ge 2 ]] || die "--rate needs a value"; rate=$2; shift 2 ;;
    --no-check) check=0; shift ;;
    --local) local=1; shift ;;
    --quick) n0=256 nb=64 ib=16 reps=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) usage >&2; die "unknown option '$1'" ;;
    *) [[ -z $out ]] || die "one OUTDIR only ('$out', '$1')"; out=$1; shift ;;
  esac
done
out=${out:-$build/weak-scaling}
for v in n0 nb ib reps; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "--$v '${!v}': use a positive integer"
done
((ib <= nb)) || die "--ib $ib is above --nb $nb"
IFS=', ' read -ra nodes <<<"$nodes_list"
((${#nodes[@]})) || die "--nodes: empty list"
for p in "${nodes[@]}"; do
  if ! [[ $p =~ ^[1-9][0-9]*$ ]] || ((p > 64)); then die "--nodes: '$p' is not a node count in 1..64"; fi
done
IFS=', ' read -ra app_list <<<"$apps"
((${#app_list[@]})) || die "--apps: empty list"
for a in "${app_list[@]}"; do
  [[ $a == cholesky || $a == qr ]] || die "--apps: '$a' is not cholesky or qr"
  [[ -x $build/apps/$a/$a ]] || die "missing $build/apps/$a/$a: build it first (cmake --build build --target $a)"
done

# shellcheck source=dense_jobs.sh
source "$root/bench/dense_jobs.sh"
# shellcheck disable=SC2034 # read by dense_job
dense_rate=$rate
mkdir -p "$out"
rm -f "$out"/*.csv "$out"/*.txt "$out"/weak_scaling.md

link="links $rate"
if ((local)); then
  where=node link="shared memory (--local)"
  echo "note: --local: the ranks talk through shared memory on this machine, not over a link"
else
  where=cluster
  if ! "$root/scripts/cluster.sh" check; then
    die "the cluster in a box needs root and network namespaces here (or pass --local)"
  fi
fi

# The order at P nodes: N0·sqrt(P) to the nearest multiple of NB (at least NB).
order() {
  awk -v n0="$n0" -v p="$1" -v nb="$nb" 'BEGIN { k = int(n0 * sqrt(p) / nb + 0.5); if (k < 1) k = 1; print k * nb }'
}

cores=$(dense_cpu_count)
max_p=0
for p in "${nodes[@]}"; do ((p > max_p)) && max_p=$p; done
note=""
if ((max_p > cores)); then
  note="note: this machine gives the runs $cores core(s): at P > $cores the nodes share cores (P = $max_p: up to $(((max_p + cores - 1) / cores)) ranks per core), so the efficiency there measures oversubscription as well as the network."
  echo "$note"
fi
echo "weak scaling: N0 $n0, NB $nb, IB $ib, $reps run(s) of each variant per job, nodes ${nodes[*]}, link $rate, one rank and one worker per node; output in $out"

failed=0
for p in "${nodes[@]}"; do
  n=$(order "$p")
  for a in "${app_list[@]}"; do
    args=(-N "$n" --nb "$nb" --threads 1 --repeat "$reps")
    [[ $a == qr ]] && args+=(--ib "$ib")
    if ((check == 0)) || { [[ $a == qr ]] && ((n > qr_check_max)); }; then
      args+=(--no-check)
    fi
    if [[ $where == node ]]; then w="node:$p"; else w="cluster:$p"; fi
    dense_job "$out" "$a-p$p-n$n" "$w" openmpi "$build/apps/$a/$a" "${args[@]}" || failed=$((failed + 1))
  done
done

# The tables: per app and P, the median Gflop/s of each variant's runs that passed (or were
# not checked), and its efficiency against the smallest P.
python3 - "$out" "$n0" "$nb" "$reps" "$link" "$note" "${app_list[@]}" <<'EOF' | tee "$out/weak_scaling.md"
import csv, glob, os, re, statistics, sys
out, n0, nb, reps, link, note = sys.argv[1:7]
apps = sys.argv[7:]
names = [('hytask', 'hytask'), ('scalapack', 'ScaLAPACK'), ('starpu', 'StarPU-MPI')]
peer = {'cholesky': 'pdpotrf', 'qr': 'pdgeqrf'}
problems = []
for app in apps:
    rows = {}  # P -> {'n', 'grid', variant -> [gflops]}
    for f in glob.glob(os.path.join(out, f'{app}-p*-n*.csv')):
        p = int(re.search(r'-p(\d+)-n', os.path.basename(f)).group(1))
        for r in csv.DictReader(open(f)):
            d = rows.setdefault(p, {'n': r['n'], 'grid': r['p'] + ' × ' + r['q']})
            if r['status'] in ('PASSED', 'UNCHECKED'):
                d.setdefault(r['variant'], []).append(float(r['gflops']))
            else:
                problems.append(f'{app}, P = {p}: {r["variant"]} run {r["rep"]}: {r["status"]}')
    print(f'\n### {app}: N0 = {n0}, NB = {nb}, median of {reps} run(s), {link}\n')
    if not rows:
        print('(no results)')
        continue
    base_p = min(rows)
    rate_of = lambda p, v: statistics.median(rows[p][v]) if rows[p].get(v) else None
    head = ' | '.join(f'{label} Gflop/s' for _, label in names)
    eff = ' | '.join(f'{label} eff.' for _, label in names)
    print(f'| P | grid | N | {head} | {eff} |')
    print('|---:|---|---:|' + '---:|' * (2 * len(names)))
    for p in sorted(rows):
        g, e = [], []
        for v, _ in names:
            x, b = rate_of(p, v), rate_of(base_p, v)
            g.append(f'{x:.2f}' if x else '–')
            e.append(f'{100 * (x / p) / (b / base_p):.0f} %' if x and b else '–')
        print(f'| {p} | {rows[p]["grid"]} | {rows[p]["n"]} | ' + ' | '.join(g) + ' | ' + ' | '.join(e) + ' |')
    print(f'\nScaLAPACK is `{peer[app]}`. Efficiency: Gflop/s per rank at P over Gflop/s per rank at '
          f'P = {base_p}. N = N0·sqrt(P) to a multiple of NB: the matrix per rank stays about N0², '
          f'the flops per rank grow as sqrt(P).')
if note:
    print('\n' + note)
for line in problems:
    print(f'\n**not counted**: {line}')
EOF
((failed == 0)) || { echo "$failed job(s) failed: see their output in $out" >&2; exit 1; }
