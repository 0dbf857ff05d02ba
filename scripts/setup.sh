#!/usr/bin/env bash
# Installs, with apt-get, whatever hytask needs that this Debian machine lacks, then
# configures and builds hytask in $HYTASK_BUILD_DIR (default: build/).
# Sourced by demo.sh and test.sh; run it alone to just set up and build.
#   HYTASK_CMAKE_ARGS="..."  extra arguments for the CMake configure step
set -euo pipefail

HYTASK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HYTASK_BUILD_DIR="${HYTASK_BUILD_DIR:-$HYTASK_ROOT/build}"

# Package list: compilers and build tools, the libraries the core needs, test and benchmark
# tools, the OpenMP peers (GCC's libgomp comes with g++; Clang brings libomp), both MPIs,
# gfortran for the Fortran example and tests (examples/fortran, tests/fortran),
# for apps/hpl OpenBLAS and LAPACKE, with HPCC's HPL as its peer, for apps/cholesky's peers
# ScaLAPACK (for each MPI) and StarPU-MPI, for the overlap benchmark iproute2
# (scripts/cluster.sh) and gnuplot (its plots), python3 and tcpdump (cluster.sh --capture,
# bench/ob1_tcp_trace.py and their tests, the Cholesky runner's summary).
HYTASK_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libboost-context-dev libhwloc-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev
  clang libomp-dev
  openmpi-bin libopenmpi-dev mpich libmpich-dev
  gfortran
  libopenblas-dev liblapacke-dev hpcc
  libscalapack-openmpi-dev libscalapack-mpich-dev libstarpu-dev
  iproute2 gnuplot-nox python3 tcpdump
  libotf2-trace-dev otf2-tools
)

log() { printf '\033[1m[hytask]\033[0m %s\n' "$*" >&2; }

install_missing_packages() {
  local missing=()
  for p in "${HYTASK_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    log "all required Debian packages are installed"
    return
  fi
  log "installing missing Debian packages: ${missing[*]}"
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null; then
      sudo="sudo"
    else
      log "error: packages are missing and this is not root (and there is no sudo)."
      log "       install them yourself: apt-get install ${missing[*]}"
      exit 1
    fi
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# configure_and_build [TARGET...]: everything, or only the targets named.
configure_and_build() {
  local generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  log "configuring in $HYTASK_BUILD_DIR"
  # shellcheck disable=SC2086
  cmake -S "$HYTASK_ROOT" -B "$HYTASK_BUILD_DIR" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo ${HYTASK_CMAKE_ARGS:-} >/dev/null
  log "building (this takes a few minutes the first time)"
  cmake --build "$HYTASK_BUILD_DIR" --parallel "$(nproc)" ${1:+--target "$@"}
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  install_missing_packages
  configure_and_build
fi
