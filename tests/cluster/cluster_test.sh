#!/usr/bin/env bash
# Tests scripts/cluster.sh with one MPI: a 2-rank job across two namespaces whose data must
# arrive intact over the link; a failing job; an interrupted job. After each, nothing the
# script made may remain. Exits 77 (skipped) when this machine cannot make namespaces.
#   cluster_test.sh CLUSTER_SH MPI CHECK_PROGRAM
set -uo pipefail
cluster=$1 mpi=$2 check=$3
fail() { echo "FAIL: $*"; exit 1; }

if ! "$cluster" check; then
  echo "SKIP: this machine cannot make network namespaces (see the line above)"
  exit 77
fi

leftovers() {  # namespaces of the run whose script pid is $1
  ip netns list | awk '{print $1}' | grep -E "^hytc$1(n[0-9]+|br)$" || true
}

# 1. Data crosses the link intact, the ranks are on two nodes, and the link carried it.
out=$(mktemp)
"$cluster" run --mpi "$mpi" -n 2 --stats -- "$check" --expect-separate --bytes 4194304 >"$out" 2>&1 &
pid=$!
wait $pid; status=$?
cat "$out"
((status == 0)) || fail "the 2-node job failed with status $status"
grep -q "2 ranks in 2 network namespace(s).*data intact" "$out" || fail "no intact data across 2 nodes"
sent=$(sed -n 's/.*node 0 .*: sent \([0-9]*\) bytes.*/\1/p' "$out")
[[ -n $sent ]] && ((sent >= 4194304)) || fail "node 0 sent only '${sent:-?}' bytes over its link: the data did not cross it"
[[ -z $(leftovers $pid) ]] || fail "namespaces left behind: $(leftovers $pid)"

# 1b. Open MPI: --capture records the link, and bench/ob1_tcp_trace.py finds the 4 MiB
# message's rendezvous in it (sender's RNDV, receiver's ACK).
if [[ $mpi == openmpi ]]; then
  command -v tcpdump >/dev/null || fail "tcpdump is missing (scripts/setup.sh installs it)"
  cap=$(mktemp --suffix=.pcap)
  "$cluster" run --mpi "$mpi" -n 2 --capture "$cap" -- "$check" --expect-separate --bytes 4194304 >"$out" 2>&1 ||
    { cat "$out"; fail "the job with --capture failed"; }
  grep -q "capture of node 0's link: $cap" "$out" || { cat "$out"; fail "--capture did not say where it wrote"; }
  trace=$(python3 "$(dirname "$cluster")/../bench/ob1_tcp_trace.py" "$cap" 2>&1)
  echo "$trace"
  n=$(sed -n 's/^rendezvous messages: \([0-9]*\);.*/\1/p' <<<"$trace")
  [[ -n $n ]] && ((n >= 1)) || fail "no rendezvous found in the capture"
  rm -f "$cap"
fi

# 2. A job that fails: its status comes back, and nothing is left behind.
"$cluster" run --mpi "$mpi" -n 2 -- "$check" --no-such-option >"$out" 2>&1 &
pid=$!
wait $pid; status=$?
((status != 0)) || fail "a failing job returned status 0"
[[ -z $(leftovers $pid) ]] || fail "namespaces left behind after a failed job: $(leftovers $pid)"

# 3. Ctrl-C while the job runs: everything is removed. (Job control, so that the background
# job does not ignore SIGINT as a non-interactive shell's background jobs do.) The ranks run
# `sleep` with an argument of this run's own, and every process in the run's namespaces
# (ranks, launcher, daemons) is recorded before the interrupt: `ip netns del` does not end
# them, so each must be gone afterwards. One left behind fails the test (and is killed).
alive() {  # the pids given that still exist (zombies excepted)
  local p state
  for p in "$@"; do
    state=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) || continue
    [[ -n $state && $state != Z ]] && echo "$p"
  done
}
nap="60.$$$RANDOM"  # sleep accepts a fraction: a command line no other process has
set -m
"$cluster" run --mpi "$mpi" -n 2 -- sleep "$nap" >"$out" 2>&1 &
pid=$!
fail3() { kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null; fail "$@"; }  # ends the run first
for _ in $(seq 100); do [[ -n $(leftovers $pid) ]] && break; sleep 0.1; done
[[ -n $(leftovers $pid) ]] || fail3 "the interrupted run never made its namespaces"
# Both ranks are running before the interrupt.
for _ in $(seq 100); do (($(pgrep -cfx "sleep $nap") >= 2)) && break; sleep 0.1; done
ranks=$(pgrep -fx "sleep $nap" | tr '\n' ' ')
(($(wc -w <<<"$ranks") == 2)) || fail3 "expected the 2 ranks running 'sleep $nap', found: '$ranks'"
inside=""
for ns in $(leftovers $pid); do inside="$inside $(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"; done
for r in $ranks; do [[ " $inside " == *" $r "* ]] || fail3 "rank $r is not in the run's namespaces ($inside)"; done
kill -INT $pid
wait $pid; status=$?
((status != 0)) || fail "an interrupted run returned status 0"
for _ in $(seq 50); do [[ -z $(leftovers $pid) ]] && break; sleep 0.1; done
[[ -z $(leftovers $pid) ]] || fail "namespaces left behind after Ctrl-C: $(leftovers $pid)"
for _ in $(seq 30); do [[ -z $(alive $inside) ]] && break; sleep 0.1; done
left=$(alive $inside | xargs)
stray=$(pgrep -fx "sleep $nap" | xargs)
if [[ -n $left || -n $stray ]]; then
  ps -o pid,ppid,args -p "$(echo $left $stray | tr ' ' ',')" 2>/dev/null
  kill -KILL $left $stray 2>/dev/null
  fail "processes of the interrupted run are still alive after Ctrl-C: ${left:-}${stray:+ (ranks: $stray)}"
fi
echo "interrupted run: the $(wc -w <<<"$inside") processes that were in its namespaces are gone"
set +m

# 4. Usage errors exit with 2.
"$cluster" run --mpi nosuchmpi -- true >/dev/null 2>&1; status=$?
((status == 2)) || fail "--mpi nosuchmpi exited with $status, not 2"
"$cluster" run >/dev/null 2>&1; status=$?
((status == 2)) || fail "run without a program exited with $status, not 2"
rm -f "$out"
echo "PASS"
