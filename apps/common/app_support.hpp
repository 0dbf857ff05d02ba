// What the reference applications share: variant lists on the command line, the
// default number of workers per rank, the dense apps' process grid, ending the job on an error, and a counter-based random
// number generator.
#pragma once

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "command_line.hpp"

namespace hytask_apps {

// The cores this rank may run on, shared with the other ranks of its node; under Slurm the
// CPUs each task was given (--cpus-per-task), at most those it may run on, as the runtime's
// HYTASK_THREADS default does.
inline int default_threads(MPI_Comm world) {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  if (const char* v = std::getenv("SLURM_CPUS_PER_TASK")) {
    const int n = std::atoi(v);
    if (n >= 1 && n <= 4096) return std::min(n, std::max(1, cores));
  }
  MPI_Comm node;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 1;
  MPI_Comm_size(node, &local);
  MPI_Comm_free(&node);
  return std::max(1, cores / local);
}

// --variant's comma-separated list: the entries of `table` (each with .name and .v) named in
// `text`, in its order. `use(entry)` is called for each before it is taken, to reject one
// this build cannot run (by throwing). An unknown name or an empty list: a usage_error listing
// `known`, the accepted names.
template <class Entry, std::size_t N, class Use>
auto parse_variant_list(const std::string& text, const Entry (&table)[N], const char* known, Use use) {
  std::vector<decltype(table[0].v)> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    bool found = false;
    for (const Entry& e : table)
      if (item == e.name) {
        use(e);
        out.push_back(e.v);
        found = true;
      }
    if (!found) throw hytask_cli::usage_error("unknown variant '" + item + "'; known: " + known);
  }
  if (out.empty()) throw hytask_cli::usage_error(std::string("--variant: empty list; known: ") + known);
  return out;
}

// cholesky's and qr's --variant: the names in `table` (hytask, scalapack, starpu), or all:
// those `built` says this build has. A variant not built is a usage_error saying what to
// install.
template <class Entry, std::size_t N, class Built>
auto parse_peer_variants(const std::string& text, const Entry (&table)[N], Built built) {
  if (text == "all") {
    std::vector<decltype(table[0].v)> out;
    for (const Entry& e : table)
      if (built(e.v)) out.push_back(e.v);
    return out;
  }
  return parse_variant_list(text, table, "hytask, scalapack, starpu, all", [&](const Entry& e) {
    if (built(e.v)) return;
    const std::string name = e.name;
    throw hytask_cli::usage_error(
        "the variant '" + name + "' was not built here (" +
        (name == "starpu" ? std::string("StarPU-MPI 1.3 is missing, or this build's MPI is not Open MPI, which "
                                        "Debian's StarPU-MPI uses: apt-get install libstarpu-dev")
                          : std::string("ScaLAPACK for this MPI is missing: apt-get install "
                                        "libscalapack-openmpi-dev or libscalapack-mpich-dev")) +
        ", then rebuild)");
  });
}

// An error main did not handle: "<app>: <what>" on stderr (nothing when `what` is null: it
// was said), then the job ends with `status` (MPI_Abort once MPI is up: the other ranks may
// be waiting for this one). Returns status.
inline int fail(const char* app, const char* what, int status) {
  if (what) std::fprintf(stderr, "%s: %s\n", app, what);
  std::fflush(stderr);
  int init = 0, done = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&done);
  if (init && !done) MPI_Abort(MPI_COMM_WORLD, status);
  return status;
}

// SplitMix64: a well-mixed 64-bit value from a counter.
inline std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The P x Q grid of the dense apps (cholesky, qr): -P and -Q as given, which must both be
// given and fit `size` ranks, or neither, for MPI_Dims_create's most square grid with the
// longer side across the columns (a step's column of tiles is one chain per process row:
// fewer rows hand over less). False, with the message on the root, when they do not fit.
inline bool choose_grid(const char* app, int size, bool root, int& p, int& q) {
  if ((p > 0) != (q > 0) || (p > 0 && p * q != size)) {
    if (root)
      std::fprintf(stderr, "%s: the grid -P %d -Q %d does not fit %d ranks: give both, with P x Q = %d "
                   "(or neither, for MPI_Dims_create's)\n", app, p, q, size, size);
    return false;
  }
  if (p == 0) {
    int dims[2] = {0, 0};
    MPI_Dims_create(size, 2, dims);
    p = dims[1];
    q = dims[0];
  }
  return true;
}

}  // namespace hytask_apps
