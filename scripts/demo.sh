#!/usr/bin/env bash
# Sets up (installs missing Debian packages, builds) and runs the showcase on this machine:
# a tiled Cholesky factorisation as a graph of dependent tasks, timed beside the same
# computation run sequentially, with its result checked.
#   scripts/demo.sh [cholesky options, e.g. --n 2048 --tile 128]
set -euo pipefail
# shellcheck source=setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

install_missing_packages
configure_and_build
log "running examples/cholesky (tasks with dependencies vs. a sequential run)"
"$HYTASK_BUILD_DIR/examples/cholesky" "$@"
