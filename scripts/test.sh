#!/usr/bin/env bash
# Sets up (installs missing Debian packages, builds) and runs the tests, in one ctest run
# with one summary line. Two tiers (DEVELOPERS.md, "Tests"):
#   scripts/test.sh [ctest args]          the default tier, what CI runs: every feature on
#                                         both MPIs, the unit tests under ThreadSanitizer and
#                                         AddressSanitizer + UBSan, one job per scenario group
#   scripts/test.sh --full [ctest args]   also the full matrix (label full): every mode x
#                                         progress policy x worker count x MPI, TSan on both
#                                         MPIs, the apps' shape sweeps, installs from scratch
# Extra arguments go to ctest, e.g. `-R Deps`, `-L quick`, `-L tsan`.
# HYTASK_TEST_JOBS sets ctest's parallel level (default: the cores, at least 2).
set -euo pipefail
# shellcheck source=setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

full=OFF
if [[ ${1:-} == --full ]]; then
  full=ON
  shift
fi
# Line tables only (-g1): a third faster to build than full debug information; a failing
# test's backtrace still has files and lines.
HYTASK_CMAKE_ARGS="${HYTASK_CMAKE_ARGS:-} -DHYTASK_WERROR=ON -DHYTASK_SANITIZER_TESTS=ON -DHYTASK_FULL_TESTS=$full -DHYTASK_LINE_TABLES_ONLY=ON"
jobs=${HYTASK_TEST_JOBS:-$(nproc)}
((jobs >= 2)) || jobs=2
start=$(date +%s)
install_missing_packages
configure_and_build
built=$(date +%s)
log "running the tests ($([[ $full == ON ]] && echo "full tier" || echo "default tier"), ctest -j $jobs)"
cd "$HYTASK_BUILD_DIR"
status=0
ctest --output-on-failure --timeout 600 -j "$jobs" "$@" || status=$?
end=$(date +%s)
log "set-up and build $((built - start)) s, tests $((end - built)) s, in all $((end - start)) s"
exit $status
