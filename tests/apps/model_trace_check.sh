#!/bin/sh
# hytask-model on a real trace: runs jacobi3d's masteronly variant with HYTASK_TRACE on the
# given launcher, then hytask-model on its per-rank files, and checks that every rank's
# fractions sum to 1, that it counted the iterations the program made (all but the last,
# whose compute phase no communication phase ends), and that the compute it found
# overlappable (tasks named overlap:inner) is the inner domain's share of the points.
#   model_trace_check.sh HYTASK_MODEL MPIEXEC [launcher flags...] -- JACOBI3D
set -u
model=$1; shift
launch=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do launch="$launch $1"; shift; done
[ $# -gt 0 ] || { echo "usage: $0 HYTASK_MODEL MPIEXEC [flags] -- JACOBI3D" >&2; exit 2; }
shift
prog=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
iters=30
# 2 ranks, 1-D: each holds 32 of the 64 planes and one neighbour, so its boundary is one
# plane of 32: the inner domain is 31/32 = 96.9 % of its points.
HYTASK_TRACE=$dir/run.json $launch "$prog" --variant masteronly --threads 2 --size 64 --iters $iters \
  --stencil 6 --decomposition 1d --no-breakdown || { echo "FAIL: jacobi3d exited with $?"; exit 1; }
ls "$dir"
[ -f "$dir/run.rank0.json" ] && [ -f "$dir/run.rank1.json" ] || { echo "FAIL: no per-rank trace files"; exit 1; }
out=$("$model" "$dir/run.json" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: hytask-model exited with $rc"; exit 1; }
echo "$out" | awk -v want=$((iters - 1)) '
  $1 ~ /^[0-9]+$/ && NF >= 6 {
    rank[$1] = 1
    if ($2 != want) { print "FAIL: rank " $1 " has " $2 " iterations, the program made " want " complete ones"; bad = 1 }
    sum = $4 + $5 + $6
    if (sum < 0.997 || sum > 1.003) { print "FAIL: rank " $1 " fractions sum to " sum; bad = 1 }
    if ($4 <= 0 || $4 >= 1) { print "FAIL: rank " $1 " f_comm " $4 " is not in (0, 1)"; bad = 1 }
    share = $6 / ($5 + $6)
    # The inner share of the points is 0.969; task overhead weighs more on the thin boundary,
    # and a preempted task moves it either way (1.0: no compute classed non-overlappable).
    if (share < 0.85 || share > 0.996) { print "FAIL: rank " $1 " overlappable share of the compute " share ", expected about 0.97"; bad = 1 }
  }
  END {
    if (length(rank) != 2) { print "FAIL: " length(rank) " rank rows, expected 2"; bad = 1 }
    exit bad
  }' || exit 1
echo "$out" | grep -q "^hytask tasks .*x$" || { echo "FAIL: no prediction for tasks"; exit 1; }
echo "$out" | grep -q "^funneled .*x$" || { echo "FAIL: no prediction for funneled"; exit 1; }
rows=$("$model" --per-iteration "$dir/run.json" | grep -cE '^[01] +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$')
[ "$rows" -eq $((2 * (iters - 1))) ] || { echo "FAIL: --per-iteration printed $rows iteration rows, expected $((2 * (iters - 1)))"; exit 1; }
echo "PASS: hytask-model read both ranks, $((iters - 1)) iterations each, fractions summing to 1"
