// The benchmarks' command lines: tools/cli/command_line.hpp's conventions (--help, --opt=value,
// usage errors with status 2 that name the option), plus what the programs run under an MPI
// launcher share: they parse before MPI starts, and one process of the job speaks.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "command_line.hpp"

namespace bench {

// False in every process an MPI launcher started but its first (Open MPI, MPICH's Hydra,
// PMIx), before MPI is up: --help and usage errors are printed once per job, not per rank.
// True outside a launcher.
inline bool launcher_rank_zero() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MPI_LOCALRANKID"})
    if (const char* s = std::getenv(v)) return std::strcmp(s, "0") == 0;
  return true;
}

// A command line parsed before MPI starts. `parse(print_help)` declares the options, parses
// and checks them (throwing hytask_cli::usage_error) and returns false when --help was asked
// for (printed when print_help). Nothing: run the program. Otherwise the status to exit
// with: 0 after --help, 2 after a usage error; launcher rank zero alone prints either.
// (Outside a launcher it is every program's frame: taskbench's threaded systems use it too.)
template <class Parse>
std::optional<int> parse_before_mpi(const std::string& program, Parse parse) {
  const bool speak = launcher_rank_zero();
  try {
    if (parse(speak)) return std::nullopt;
    return 0;
  } catch (const hytask_cli::usage_error& e) {
    if (speak) std::fputs(hytask_cli::error_text(program, e.what()).c_str(), stderr);
    return 2;
  }
}

}  // namespace bench
