#!/bin/sh
# Runs every jacobi3d variant (and the sequential reference) on a small domain, with derived
# datatypes and with packed halos, and checks that every run printed the same checksum.
#   jacobi3d_check.sh MPIEXEC [launcher flags...] -- JACOBI3D [jacobi3d options...]
set -u
launch=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do launch="$launch $1"; shift; done
[ $# -gt 0 ] || { echo "usage: $0 MPIEXEC [flags] -- JACOBI3D [options]" >&2; exit 2; }
shift
prog=$1; shift
expected=""
# The variants 'all' runs: the program's own list (its message for an unknown variant).
variants=$("$prog" --variant '?' 2>&1 | sed -n "s/.*known: \(.*\), all.*/\1/p" | tr ',' '\n' | grep -c .)
[ "$variants" -gt 0 ] || { echo "FAIL: could not read the variant list from $prog"; exit 1; }
for halo in datatype packed; do
  out=$($launch "$prog" --variant all --tests 0,3 --halo $halo "$@" 2>&1)
  rc=$?
  echo "$out"
  if [ $rc -ne 0 ]; then echo "FAIL: jacobi3d exited with $rc (--halo $halo)"; exit 1; fi
  # Every variant (the reference included), the two tested ones once more for the second
  # --tests value.
  n=$(echo "$out" | grep -c 'checksum 0x')
  if [ "$n" -ne $((variants + 2)) ]; then echo "FAIL: $n checksum lines, expected $((variants + 2)) (--halo $halo)"; exit 1; fi
  sums=$(echo "$out" | sed -n 's/.*checksum \(0x[0-9a-f]*\).*/\1/p' | sort -u)
  if [ "$(echo "$sums" | wc -l)" -ne 1 ]; then echo "FAIL: checksums differ (--halo $halo):"; echo "$sums"; exit 1; fi
  ref=$(echo "$out" | sed -n 's/^sequential .*checksum \(0x[0-9a-f]*\).*/\1/p')
  if [ "$ref" != "$sums" ]; then echo "FAIL: the variants' checksum $sums is not the sequential reference's '$ref'"; exit 1; fi
  if [ -n "$expected" ] && [ "$expected" != "$ref" ]; then echo "FAIL: packed halos give $ref, datatypes $expected"; exit 1; fi
  # Every variant's sweeps were timed in both passes on every rank: its cspeed (the column
  # before the checksum) is a percentage, not "-".
  unmeasured=$(echo "$out" | grep 'checksum 0x' | grep -v '^sequential ' |
               awk '{ if ($(NF - 2) !~ /^[0-9]+%$/) print $1 " " $(NF - 2) }')
  if [ -n "$unmeasured" ]; then echo "FAIL: no compute speed measured (--halo $halo): $unmeasured"; exit 1; fi
  expected=$ref
done
echo "PASS: every variant and both halo modes give $expected, the sequential reference"
