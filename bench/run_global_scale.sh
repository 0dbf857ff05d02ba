#!/usr/bin/env bash
# Per-rank costs of global dependencies at P = 2 ... 64 ranks of this machine (weak scaling,
# oversubscribed, one worker per rank): bench_global_scale once per P, then a table.
#   bench/run_global_scale.sh [BUILD_DIR] [MPI: openmpi|mpich] [P...]
# Counts, not times: valid on 2 cores. docs/benchmarks.md, "Per-rank costs as ranks are added".
#
# The round columns, per rank and round, averaged over the ranks / the largest rank's:
# - "acks and counts": what the layer sends to end rounds (bench_global_scale's counters: an
#   acknowledgement per announcement buffer received, at wait_all a drain count per peer);
# - "inside the allreduce": what MPI itself sends for the rounds' MPI_Iallreduce (16 bytes of
#   data per rank). Under Open MPI it is measured by its pml monitoring layer: internal
#   (collective) messages of a run of 40 phases minus those of a run of 20, over the 20 extra
#   rounds, so that the set-up's collectives cancel out. MPICH has no such layer: "–".
set -euo pipefail
build=${1:-build}
mpi=${2:-openmpi}
shift $(($# > 2 ? 2 : $#))
ranks=("$@")
((${#ranks[@]})) || ranks=(2 4 8 16 32 64)
if [[ $mpi == openmpi ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1,monitoring
  launch=(mpiexec.openmpi --oversubscribe --bind-to none -x HYTASK_THREADS=1
          --mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 1)
  program=$build/bench/bench_global_scale
  [[ -x $program ]] || program=$build/bench/bench_global_scale_openmpi
else
  launch=(mpiexec.mpich -env HYTASK_THREADS 1)
  program=$build/bench/bench_global_scale_mpich
  [[ -x $program ]] || program=$build/bench/bench_global_scale
fi
[[ -x $program ]] || { echo "run_global_scale.sh: no $program: build bench_global_scale first" >&2; exit 1; }
phases=20
# Per rank "rank messages bytes" of the internal messages in a run's monitoring report.
internal() { awk -F'\t' '$1 == "I" { split($4, b, " "); split($5, m, " "); msgs[$2] += m[1]; bytes[$2] += b[1] }
  END { for (r in msgs) print r, msgs[r], bytes[r] }' <<<"$1" | sort; }
printf '| P | remote accesses per rank | A / remote | B / remote | C / remote | buffers / remote | bytes / remote | rounds / phase | acks and counts: messages per rank per round | bytes | inside the allreduce: messages per rank per round | bytes | peak tasks per rank | peak ordered accesses per rank |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for p in "${ranks[@]}"; do
  out=$(timeout 900 "${launch[@]}" -n "$p" "$program" --phases $phases 2>&1)
  line=$(grep '^bench_global_scale ' <<<"$out")
  get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
  coll_msgs="–" coll_bytes="–"
  if [[ $mpi == openmpi ]]; then
    more=$(timeout 900 "${launch[@]}" -n "$p" "$program" --phases $((2 * phases)) 2>&1)
    read -r coll_msgs coll_bytes < <(join <(internal "$out") <(internal "$more") |
      awk -v p="$p" -v k=$phases '{ m = ($4 - $2) / k; b = ($5 - $3) / k; sm += m; sb += b
        if (m > mm) mm = m; if (b > mb) mb = b }
        END { printf "%.2f/%.2f %.1f/%.1f\n", sm / p, mm, sb / p, mb }')
  fi
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$p" \
    "$(get remote_per_rank)" "$(get announces_per_remote)" "$(get releases_per_remote)" \
    "$(get completions_per_remote)" "$(get buffers_per_remote)" "$(get bytes_per_remote)" \
    "$(get rounds_per_phase)" "$(get round_messages_per_round)" "$(get round_bytes_per_round)" \
    "$coll_msgs" "$coll_bytes" "$(get peak_tasks)" "$(get peak_nodes)"
done
