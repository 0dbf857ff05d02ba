#!/usr/bin/env bash
# Sets up (installs missing Debian packages, builds) and runs every test: the unit tests,
# the same tests under ThreadSanitizer and AddressSanitizer + UndefinedBehaviorSanitizer,
# the tools' tests and an install + find_package check. One ctest run, one summary line.
#   scripts/test.sh [extra ctest arguments, e.g. -R Deps]
set -euo pipefail
# shellcheck source=setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

HYTASK_CMAKE_ARGS="${HYTASK_CMAKE_ARGS:-} -DHYTASK_WERROR=ON -DHYTASK_SANITIZER_TESTS=ON"
start=$(date +%s)
install_missing_packages
configure_and_build
log "running the tests"
cd "$HYTASK_BUILD_DIR"
status=0
ctest --output-on-failure --timeout 600 "$@" || status=$?
log "tests finished in $(( $(date +%s) - start )) s"
exit $status
