#!/usr/bin/env bash
# Sets up (installs missing Debian packages, builds) and runs the showcase on this machine:
# a tiled Cholesky factorisation as a graph of dependent tasks, timed beside the same
# computation run sequentially, with its result checked; then MPI inside tasks on 2 ranks:
# a halo exchange whose communication overlaps its compute tasks, checked bit for bit, and
# a ping-pong between two tasks.
#   scripts/demo.sh [cholesky options, e.g. --n 2048 --tile 128]
set -euo pipefail
# shellcheck source=setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

install_missing_packages
configure_and_build
log "running examples/cholesky (tasks with dependencies vs. a sequential run)"
"$HYTASK_BUILD_DIR/examples/cholesky" "$@"

# Open MPI refuses root without these; they are harmless otherwise (and ignored by MPICH).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log "running examples/halo_exchange on 2 ranks (MPI inside tasks, overlapping compute)"
mpiexec --bind-to none -n 2 "$HYTASK_BUILD_DIR/examples/halo_exchange" --rows 1024 --cols 1024 --iters 100
log "running examples/mpi_pingpong on 2 ranks (a ping-pong task beside compute tasks)"
HYTASK_THREADS=1 mpiexec --bind-to none -n 2 "$HYTASK_BUILD_DIR/examples/mpi_pingpong"
