#!/usr/bin/env bash
# The showcase: does MPI overlap communication with computation here, and what does hytask
# change? Sets up (installs missing Debian packages, builds), then runs hytask-overlap on two
# ranks that exchange 256 KiB to 16 MiB messages while they compute: once with plain Open MPI
# (Isend/Irecv, compute, Waitall) and once with hytask (the same exchange in a task, the
# compute in tasks beside it). As root it makes a "cluster in a box" (two network namespaces
# joined by a 2 Gbit/s link, scripts/cluster.sh) so that messages take real time on a wire;
# otherwise it runs on localhost, where the figures say less.
#   scripts/demo.sh [more hytask-overlap options, e.g. --sizes 1M,4M --modes mpi,hytask-thread]
set -euo pipefail
# shellcheck source=setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

install_missing_packages
configure_and_build

out="$HYTASK_BUILD_DIR/demo"
mkdir -p "$out"
log "running hytask-overlap: plain Open MPI against hytask, 2 ranks (takes about a minute)"
"$HYTASK_ROOT/scripts/cluster.sh" run --mpi openmpi -n 2 -- \
  "$HYTASK_BUILD_DIR/tools/hytask-overlap" --modes mpi,hytask-workers --sizes 256K:16M \
  --steps 0.4:1.1:0.1 --iters 5 --csv "$out/overlap.csv" --json "$out/overlap.json" "$@"

# One line per size: the overlap each mode reached.
awk -F, 'NR > 1 && $3 == "ASYNC" { o[$4, $2] = $17; s[$4, $2] = $19; sizes[$4] = 1 }
  END {
    n = 0; for (b in sizes) list[++n] = b + 0
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (list[j] < list[i]) { t = list[i]; list[i] = list[j]; list[j] = t }
    printf "\n%-10s %22s %22s\n", "message", "plain MPI overlaps", "hytask overlaps"
    for (i = 1; i <= n; ++i) {
      b = list[i]; label = b >= 1048576 ? b / 1048576 " MiB" : b / 1024 " KiB"
      printf "%-10s %21.0f%% %21.0f%%\n", label, o[b, "mpi"], o[b, "hytask-workers"]
    }
  }' "$out/overlap.csv"
cat <<EOF

Plain MPI moves a large message only inside MPI calls, so the transfer waits for the compute
to end. With hytask the exchange runs in a task that suspends; the workers poll MPI between
compute tasks, and the message moves while they compute. Results: $out/overlap.{csv,json}.
More: docs/overlap.md (the method, every mode, MPICH) and docs/benchmarks.md (full sweeps).
EOF
