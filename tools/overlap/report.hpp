// hytask-overlap's output: the terminal table, CSV, JSON (also read back by --merge) and a
// gnuplot PNG.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "results.hpp"

namespace overlap {

struct report {
  std::vector<run_info> runs;
  std::vector<row> rows;
  std::vector<std::size_t> run_of;  // rows[i] came from runs[run_of[i]]

  void add(const run_info& info, const std::vector<row>& measured);
  // Adds every run of a JSON file written by write_json. Throws std::runtime_error naming the
  // file and the problem.
  void add_json(const std::string& path);
  // Latency overhead of each row: its T_lat minus plain MPI's at the same MPI, size and shape.
  void fill_overheads();

  void print_table(std::FILE* out) const;
  // Seed 002's progression table, when steps of T_syn >= 1.5 T_lat were measured.
  void print_progression(std::FILE* out) const;
  void write_csv(const std::string& path) const;
  void write_json(const std::string& path) const;
  // Runs gnuplot; throws std::runtime_error when it is missing or fails.
  void write_plot(const std::string& path) const;
};

}  // namespace overlap
