// The options the dense apps (hpl, cholesky, qr) share: the matrix's order and blocks, the
// process grid, workers, repetitions, the peak, the seed and the CSV file. Each app's options
// derive from dense_options, set their defaults, and add these with add_dense_options.
#pragma once

#include <cstdint>
#include <string>

#include "command_line.hpp"

namespace hytask_apps {

struct dense_options {
  long n = 4096;        // order of the matrix (columns)
  int nb = 256;         // block / tile size
  int p = 0, q = 0;     // process grid; 0: the app's default
  int threads = 0;      // workers per rank; 0: cores of this process / ranks on its node
  int repeat = 1;       // runs of each variant
  bool peak = false;    // also measure DGEMM on every rank at once
  std::uint64_t seed = 42;
  std::string csv;      // file, or "-" for stdout
};

// -N, --nb (up to nb_max), -P, -Q, --threads, --repeat, --peak, --seed and --csv, with their
// defaults as `o` holds them; `grid_default` says what -P and -Q default to, `threads_for`
// which variants the workers serve, `repeat_how` how runs repeat.
inline void add_dense_options(hytask_cli::command_line& cli, dense_options& o, long nb_max, const char* nb_what,
                              const char* grid_default, const char* threads_for, const char* repeat_how) {
  const std::string n_default = " (default " + std::to_string(o.n) + ")";
  cli.integer("-N,--n", o.n, 1, 1L << 22, std::string("order of the matrix") + n_default);
  cli.integer("--nb", o.nb, 1, nb_max, std::string(nb_what) + " (default " + std::to_string(o.nb) + ")");
  cli.integer("-P", o.p, 1, 1 << 20, std::string("process rows, P x Q = ranks (default: ") + grid_default + ")");
  cli.integer("-Q", o.q, 1, 1 << 20, "process columns");
  cli.integer("--threads", o.threads, 1, 1024,
              std::string(threads_for) + ": workers per rank (default: cores / ranks on the node)");
  cli.integer("--repeat", o.repeat, 1, 1000, std::string(repeat_how) + " (default 1)");
  cli.flag("--peak", o.peak, "also measure DGEMM on every rank at once (the machine's peak)");
  cli.integer("--seed", o.seed, 0, 1L << 62, "the matrix's seed (default 42)");
  cli.text("--csv", o.csv, "also write the results as CSV (- for stdout)", "PATH");
}

}  // namespace hytask_apps
