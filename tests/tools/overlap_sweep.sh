#!/usr/bin/env bash
# Runs a tiny hytask-overlap sweep on 2 ranks and validates its CSV and JSON.
#   overlap_sweep.sh OUTDIR MODES LAUNCHER... -- TOOL
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1 modes=$2; shift 2
launcher=()
while [[ $1 != -- ]]; do launcher+=("$1"); shift; done
shift
tool=$1
mkdir -p "$out"
name=$(echo "$modes" | tr ',' '_')
IFS=, read -ra list <<<"$modes"
"${launcher[@]}" "$tool" --modes "$modes" --sizes 64K,256K --patterns sync,async:2 \
  --steps 0.5,1.1 --iters 2 --min-time 0.001 --tasks 4 --quiet \
  --csv "$out/$name.csv" --json "$out/$name.json"
rows=$(( ${#list[@]} * 2 * 2 ))
cmake -DCSV="$out/$name.csv" -DJSON="$out/$name.json" -DROWS=$rows -DSTEPS=2 \
  -DMODES="$(IFS=';'; echo "${list[*]}")" -P "$here/check_overlap_output.cmake"
