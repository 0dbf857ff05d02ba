#!/usr/bin/env bash
# Overlap on the cluster in a box: bench/overlap_program on 2 ranks in two network namespaces
# (1 core and 1 rank each) joined by a 2 Gbit/s link: a 4 MiB message (17 ms on the wire)
# beside 20 compute tasks of 1 ms, medians of 9 iterations, about 4 s a job. hytask's program
# (the transfer task spawned first, default settings) must hide most of the transfer, and
# clearly more of it than plain MPI's "Isend; compute; Wait" measured in the same job:
#   overlap(hytask) >= OVERLAP_MIN (default 50 %)
#   overlap(hytask) - overlap(mpi) >= OVERLAP_MARGIN (default 40 points)
# Measured with this script on 2 cores shared with other builds (load 1-2), 20 jobs with
# Open MPI and 42 with MPICH: hytask 64-127 % and 65-106 %, plain MPI -28-23 % and -14-11 %,
# hytask ahead by 56 points at least (medians of noisy times can pass 100 %); a heavier
# load (3) took single jobs of a larger variant down to 53 %. With HYTASK_PROGRESS=none
# nothing moves the transfer while the tasks compute: hytask -10-17 %, which fails. A job
# that misses the bounds is measured once more (a burst of load elsewhere), and the test
# fails only if both miss. The transfer alone must take at least 80 % of its time on the
# link (the data crossed it). A job that hangs in MPI_Finalize after printing every figure
# (MPICH over UCX, 2 jobs of 45 here) is ended after OVERLAP_JOB_TIMEOUT s (15) and its
# figures kept. Exits 77 (skipped) when this machine cannot make namespaces; leaves no
# namespace and no process of the run behind (ctest runs it alone: RUN_SERIAL).
#   overlap_test.sh CLUSTER_SH MPI OVERLAP_PROGRAM
set -uo pipefail
cluster=$1 mpi=$2 prog=$3
min=${OVERLAP_MIN:-50} margin=${OVERLAP_MARGIN:-40}
rate_gbit=2 bytes=4194304
job_timeout=${OVERLAP_JOB_TIMEOUT:-15}  # a job takes 3-5 s
args=(--sizes 4M --task-ms 1 --tasks 20 --iters 9)
fail() { echo "FAIL: cluster overlap $mpi: $*"; exit 1; }

[[ -x $prog ]] || fail "no program '$prog'"
if ! "$cluster" check; then
  echo "SKIP: this machine cannot make network namespaces (see the line above)"
  exit 77
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
field() {  # field VARIANT NAME: NAME=value on the variant's line
  sed -nE "s/^overlap_program .*variant=$1 .*[ ]$2=([-0-9.]+)( .*|$)/\1/p" "$out" | head -1
}
wire_ms=$(awk -v b=$bytes -v g=$rate_gbit 'BEGIN { printf "%.1f", b * 8 / (g * 1e9) * 1e3 }')

# One job; sets hytask, plain, comm; a broken job (or anything left behind) fails at once.
measure() {
  local started=$SECONDS
  "$cluster" run --mpi "$mpi" -n 2 --rate "${rate_gbit}gbit" -- timeout -k 5 "$job_timeout" "$prog" \
    "${args[@]}" >"$out" 2>&1 &
  local pid=$!
  wait $pid; local status=$?
  local took=$((SECONDS - started))
  cat "$out"
  # Nothing left behind: the run's namespaces, and its ranks (their exact command line; the
  # script's clean-up may have just killed them: a moment to go).
  local leftovers ranks
  for _ in $(seq 30); do
    leftovers=$(ip netns list | awk '{print $1}' | grep -E "^hytc${pid}(n[0-9]+|br)$" | xargs)
    ranks=$(pgrep -fx "$prog ${args[*]}" | xargs)
    [[ -z $leftovers && -z $ranks ]] && break
    sleep 0.1
  done
  if [[ -n $leftovers || -n $ranks ]]; then
    [[ -n $ranks ]] && ps -o pid,ppid,stat,etime,args -p "${ranks// /,}" && kill -KILL $ranks 2>/dev/null
    fail "left behind: namespaces '${leftovers}', ranks '${ranks}'"
  fi
  # A rank ended by its timeout: status 124 (Open MPI passes the rank's on), or 255 when
  # MPICH's launcher loses the rank mid-finalize.
  if ((status != 0 && took >= job_timeout)) &&
     (($(grep -c "^overlap_program .*overlap_pct=" "$out") == 4)); then
    # Every figure is in: the job hung at its end, in MPI_Finalize (MPICH over UCX's TCP
    # transport, openucx/ucx#8738; node_scenarios_test.sh), which is not what this measures.
    echo "cluster overlap $mpi: the job hung in MPI_Finalize after its results" \
         "(the MPICH/UCX TCP finalize hang, openucx/ucx#8738): its figures stand"
    status=0
  fi
  ((status == 0)) || fail "the job failed with status $status"
  grep -q "^\[cluster\] 2 nodes .*link ${rate_gbit}gbit, 2 ranks, $mpi" "$out" ||
    fail "the job did not run on 2 nodes joined by a $rate_gbit Gbit/s link"
  hytask=$(field hytask overlap_pct) plain=$(field mpi overlap_pct) comm=$(field hytask comm_ms)
  [[ -n $hytask && -n $plain && -n $comm ]] ||
    fail "no 'overlap_program ... variant=hytask|mpi ... overlap_pct=' lines in the output"
  # 4 MiB at 2 Gbit/s: 16.8 ms on the wire; a transfer much faster did not cross the link.
  awk -v c="$comm" -v w="$wire_ms" 'BEGIN { exit !(c >= 0.8 * w) }' ||
    fail "the transfer alone took $comm ms, less than 80 % of the $wire_ms ms the link needs"
}

# Empty when the figures meet the bounds, else what they miss.
judge() {
  awk -v h="$hytask" -v p="$plain" -v min="$min" -v m="$margin" 'BEGIN {
    if (h < min) printf "hytask overlapped %.1f %% of the transfer (plain MPI %.1f %%), below %d %%", h, p, min
    else if (h - p < m) printf "hytask overlapped %.1f %%, plain MPI %.1f %%: less than %d points apart", h, p, m
  }'
}

missed=""
for attempt in 1 2; do
  measure
  verdict=$(judge)
  if [[ -z $verdict ]]; then
    echo "cluster overlap $mpi: hytask $hytask %, plain MPI $plain % (need >= $min % and >= MPI + $margin)," \
         "transfer alone $comm ms: ok${missed:+ (the first job missed: $missed)}"
    exit 0
  fi
  echo "cluster overlap $mpi: job $attempt: $verdict"
  missed=$verdict
done
fail "in two jobs in a row: $missed"
