#!/usr/bin/env bash
# Runs a tiny hytask-overlap sweep on 2 ranks and validates its CSV and JSON.
#   overlap_sweep.sh OUTDIR MODES LAUNCHER... -- TOOL [TOOL OPTIONS...]
# With --order O among the options, every row must say that order.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1 modes=$2; shift 2
launcher=()
while [[ $1 != -- ]]; do launcher+=("$1"); shift; done
shift
tool=$1
shift
extra=("$@")
mkdir -p "$out"
name=$(echo "$modes" | tr ',' '_')
order=exchange
for ((i = 0; i < ${#extra[@]}; ++i)); do
  [[ ${extra[$i]} == --order ]] && order=${extra[$((i + 1))]} && name="$name.$order"
done
IFS=, read -ra list <<<"$modes"
"${launcher[@]}" "$tool" --modes "$modes" --sizes 64K,256K --patterns sync,async:2 \
  --steps 0.5,1.1,1.5 --iters 2 --min-time 0.001 --tasks 4 --quiet \
  --csv "$out/$name.csv" --json "$out/$name.json" "${extra[@]}" | tee "$out/$name.txt"
# A step from 1.5 T_lat on gives Kumar's progression table, a row per mode and size.
progression=$(sed -n '/^progression (Kumar)/,$p' "$out/$name.txt" | grep -c ' KiB ' || true)
[[ $progression -eq $(( ${#list[@]} * 2 * 2 )) ]] ||
  { echo "overlap_sweep: the progression table has $progression rows"; exit 1; }
rows=$(( ${#list[@]} * 2 * 2 ))
cmake -DCSV="$out/$name.csv" -DJSON="$out/$name.json" -DROWS=$rows -DSTEPS=3 \
  -DMODES="$(IFS=';'; echo "${list[*]}")" -P "$here/check_overlap_output.cmake"
others=$(tail -n +2 "$out/$name.csv" | awk -F, -v o="$order" '$23 != o' | wc -l)
[[ $others -eq 0 ]] || { echo "overlap_sweep: $others rows do not say order $order"; exit 1; }
