// hytask-trace: the job's trace from the ranks' files, and what a trace says.
//
//   hytask-trace merge <files...> -o <job.json | job.otf2>
//   hytask-trace summary <trace files...>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "summary.hpp"
#include "trace/merge.hpp"
#include "trace/otf2_writer.hpp"

namespace {

constexpr const char* usage =
    "usage: hytask-trace merge <rank files...> -o <output.json | output.otf2>\n"
    "       hytask-trace summary <trace files...>\n"
    "merge: one timeline for the job (a process per rank, a flow arrow from each send to its\n"
    "       receive); OTF2 when the output ends in .otf2%s.\n"
    "summary: per rank, the workers' busy and idle time, MPI polls and posts, and each task\n"
    "       name's runs and time.\n";

int print_usage(int status) {
  std::fprintf(status == 0 ? stdout : stderr, usage,
               hytask::trace::otf2_available() ? "" : " (not in this build: no OTF2 library)");
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return print_usage(2);
  const std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help") return print_usage(0);
  try {
    if (cmd == "merge") {
      std::vector<std::string> inputs;
      std::string output;
      for (int i = 2; i < argc; ++i) {
        if (std::strcmp(argv[i], "-o") == 0) {
          if (i + 1 >= argc) {
            std::fprintf(stderr, "hytask-trace merge: -o needs a file name\n");
            return 2;
          }
          output = argv[++i];
        } else {
          inputs.emplace_back(argv[i]);
        }
      }
      if (inputs.empty() || output.empty()) {
        std::fprintf(stderr, "hytask-trace merge: give the ranks' trace files and -o <output>\n");
        return print_usage(2);
      }
      const auto s = hytask::trace::merge_files(inputs, output);
      std::printf("hytask-trace: %s: %d ranks, %llu events, %llu messages paired", output.c_str(), s.inputs,
                  static_cast<unsigned long long>(s.events), static_cast<unsigned long long>(s.flows));
      if (s.unmatched_sends || s.unmatched_receives)
        std::printf(" (%llu sends and %llu receives without their other end in the trace)",
                    static_cast<unsigned long long>(s.unmatched_sends),
                    static_cast<unsigned long long>(s.unmatched_receives));
      std::printf("\n");
      return 0;
    }
    if (cmd == "summary") {
      if (argc < 3) {
        std::fprintf(stderr, "hytask-trace summary: give a trace file\n");
        return print_usage(2);
      }
      const auto ranks = hytask::trace_tool::summarize(std::vector<std::string>(argv + 2, argv + argc));
      hytask::trace_tool::print(std::cout, ranks);
      return 0;
    }
    std::fprintf(stderr, "hytask-trace: unknown command '%s'\n", cmd.c_str());
    return print_usage(2);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
