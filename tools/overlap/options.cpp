#include "options.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "command_line.hpp"
#include "hytask/config.hpp"

namespace overlap {

const char* name(mode m) {
  switch (m) {
    case mode::mpi: return "mpi";
    case mode::mpi_progress: return "mpi-progress";
    case mode::hytask_workers: return "hytask-workers";
    case mode::hytask_thread: return "hytask-thread";
    case mode::hytask_none: return "hytask-none";
    case mode::hytask_node: return "hytask-node";
  }
  return "?";
}

const char* name(order o) {
  switch (o) {
    case order::exchange: return "exchange";
    case order::receiver_first: return "receiver-first";
    case order::sender_first: return "sender-first";
  }
  return "?";
}

bool is_hytask(mode m) { return m != mode::mpi && m != mode::mpi_progress; }

std::string pattern::label() const {
  switch (kind) {
    case sync: return "SYNC";
    case async: return "ASYNC";
    case async_x: return "ASYNC(" + std::to_string(tests) + ")";
  }
  return "?";
}

std::string options::layout() const {
  if (block == 0) return "contiguous";
  return "vector:" + std::to_string(block) + ":" + std::to_string(stride);
}

namespace {

[[noreturn]] void bad(const std::string& what) { throw usage_error(what); }

using hytask_cli::split;

unsigned positive(const std::string& opt, const std::string& text, unsigned max = 1u << 30) {
  char* end = nullptr;
  unsigned long v = std::strtoul(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || text[0] == '-' || v == 0 || v > max)
    bad(opt + " '" + text + "': expected a whole number from 1 to " + std::to_string(max));
  return static_cast<unsigned>(v);
}

double number(const std::string& opt, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || v <= 0)
    bad(opt + " '" + text + "': expected a positive number");
  return v;
}

std::size_t bytes(const std::string& text) {
  auto v = hytask::parse_size(text);
  if (!v || *v == 0) bad("--sizes '" + text + "': expected a size such as 65536, 64K, 4M or 1G");
  if (*v % sizeof(double) != 0)
    bad("--sizes '" + text + "': a message is made of doubles, so its size must be a multiple of 8");
  if (*v > (std::size_t{1} << 30)) bad("--sizes '" + text + "': at most 1G per message");
  return *v;
}

std::vector<mode> parse_modes(const std::string& text) {
  std::vector<mode> out;
  for (const auto& s : split(text, ',')) {
    mode m;
    if (s == "mpi") m = mode::mpi;
    else if (s == "mpi-progress") m = mode::mpi_progress;
    else if (s == "hytask-workers") m = mode::hytask_workers;
    else if (s == "hytask-thread") m = mode::hytask_thread;
    else if (s == "hytask-none") m = mode::hytask_none;
    else if (s == "hytask-node") m = mode::hytask_node;
    else bad("--modes: unknown mode '" + s + "' (use mpi, mpi-progress, hytask-workers, "
             "hytask-thread, hytask-none, hytask-node)");
    for (mode seen : out)
      if (seen == m) bad("--modes: '" + s + "' is listed twice");
    out.push_back(m);
  }
  if (out.empty()) bad("--modes: give at least one mode");
  bool progress = false;
  for (mode m : out) progress = progress || m == mode::mpi_progress;
  if (progress && out.size() > 1)
    bad("--modes: mpi-progress switches on MPICH's progress thread for the whole process, "
        "which would change every other mode; run it alone (--modes mpi-progress) and combine "
        "the JSON files with --merge");
  return out;
}

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> out;
  for (const auto& s : split(text, ',')) {
    auto colon = s.find(':');
    if (colon == std::string::npos) {
      out.push_back(bytes(s));
      continue;
    }
    std::size_t lo = bytes(s.substr(0, colon)), hi = bytes(s.substr(colon + 1));
    if (lo > hi) bad("--sizes '" + s + "': the range must go from small to large");
    for (std::size_t v = lo; v <= hi; v *= 2) out.push_back(v);
  }
  if (out.empty()) bad("--sizes: give at least one size");
  return out;
}

std::vector<pattern> parse_patterns(const std::string& text) {
  std::vector<pattern> out;
  for (const auto& s : split(text, ',')) {
    pattern p;
    if (s == "sync") p.kind = pattern::sync;
    else if (s == "async") p.kind = pattern::async;
    else if (s.rfind("async:", 0) == 0) {
      p.kind = pattern::async_x;
      p.tests = positive("--patterns async:X", s.substr(6), 100000);
    } else bad("--patterns: unknown pattern '" + s + "' (use sync, async or async:X)");
    out.push_back(p);
  }
  if (out.empty()) bad("--patterns: give at least one pattern");
  return out;
}

std::vector<double> parse_steps(const std::string& text) {
  std::vector<double> out;
  for (const auto& s : split(text, ',')) {
    auto parts = split(s, ':');
    if (parts.size() == 1) {
      out.push_back(number("--steps", s));
    } else if (parts.size() == 3) {
      double from = number("--steps", parts[0]), to = number("--steps", parts[1]),
             step = number("--steps", parts[2]);
      if (from > to) bad("--steps '" + s + "': FROM must not exceed TO");
      if ((to - from) / step > 1000) bad("--steps '" + s + "': more than 1000 steps");
      for (int i = 0; from + i * step <= to + 1e-9; ++i) out.push_back(from + i * step);
    } else {
      bad("--steps '" + s + "': expected a fraction such as 0.5 or a range FROM:TO:STEP");
    }
  }
  if (out.empty()) bad("--steps: give at least one fraction");
  for (double f : out)
    if (f > 10) bad("--steps: " + std::to_string(f) + " is more than 10 times T_lat");
  return out;
}

void parse_layout(options& o, const std::string& text) {
  if (text == "contiguous") {
    o.block = o.stride = 0;
    return;
  }
  auto parts = split(text, ':');
  if (parts.size() != 3 || parts[0] != "vector")
    bad("--layout '" + text + "': use contiguous or vector:BLOCK:STRIDE (in doubles)");
  o.block = positive("--layout BLOCK", parts[1]);
  o.stride = positive("--layout STRIDE", parts[2]);
  if (o.stride < o.block) bad("--layout '" + text + "': STRIDE must be at least BLOCK");
}

}  // namespace

std::optional<options> parse(int argc, char** argv, bool print_help) {
  options o;
  o.modes = parse_modes("mpi,hytask-workers,hytask-thread,hytask-none");
  o.sizes = parse_sizes("64K:16M");
  o.patterns = parse_patterns("async");
  o.steps = parse_steps("0.1:1.1:0.1");
  hytask_cli::command_line cli(
      "hytask-overlap",
      "[options]                 (under an MPI launcher, an even number of ranks)\n"
      "       hytask-overlap --merge A.json [B.json ...] [--csv F] [--json F] [--plot F]",
      "Measures how much a non-blocking exchange overlaps computation, per message size, with\n"
      "plain MPI, with MPI's own progress thread, and with hytask (compute in tasks, communication\n"
      "through hytask::mpi) under each HYTASK_PROGRESS policy. Ranks pair up across the two halves\n"
      "of the world ordered by node (with two nodes, every pair spans them) and exchange messages\n"
      "both ways (as Buettner's benchmark does), or one way (--order). Per size it reports\n"
      "the overlap ratio of Kumar's thesis (Eq. 4.2), the latency T_lat and its overhead over plain MPI,\n"
      "the compute speed while communication is pending, when the program saw the exchange\n"
      "complete and when the data arrived in its buffers (seen by the compute, without MPI), CPU\n"
      "time per wall time, the cores each node spent on progress threads, resident memory, and the\n"
      "node agent's counters. Run it across nodes, e.g.\n"
      "  scripts/cluster.sh run --mpi openmpi -n 2 -- build/tools/hytask-overlap --sizes 1M:16M");
  cli.custom("--modes", "LIST", [&](const std::string& v) { o.modes = parse_modes(v); },
             "comma-separated, from: mpi, mpi-progress, hytask-workers, hytask-thread,\n"
             "hytask-none, hytask-node (default: mpi,hytask-workers,hytask-thread,\n"
             "hytask-none).\n"
             "mpi-progress (MPICH only) switches on MPICH_ASYNC_PROGRESS for the whole\n"
             "process, so it must run alone; merge its JSON with --merge.");
  cli.custom("--sizes", "LIST", [&](const std::string& v) { o.sizes = parse_sizes(v); },
             "message sizes: 1M,4M or ranges of powers of two, 64K:16M (default 64K:16M)");
  cli.custom("--patterns", "LIST", [&](const std::string& v) { o.patterns = parse_patterns(v); },
             "sync, async, async:X (X progress opportunities spread through the\n"
             "compute: MPI_Testall in plain MPI, task boundaries in hytask; default async)");
  cli.custom("--order", "O", [&](const std::string& v) {
    if (v == "exchange") o.direction = order::exchange;
    else if (v == "receiver-first") o.direction = order::receiver_first;
    else if (v == "sender-first") o.direction = order::sender_first;
    else bad("--order '" + v + "': use exchange, receiver-first or sender-first");
  }, "exchange: both directions at once (default); receiver-first: the lower\n"
     "half sends, --delay-us after the upper half has posted its receives and\n"
     "started computing; sender-first: the upper half posts its receives\n"
     "--delay-us after the sends (Kumar, Fig. 4.5). One-way orders time\n"
     "the receivers only.");
  cli.custom("--delay-us", "U", [&](const std::string& v) {
    o.delay_us = number("--delay-us", v);
    if (o.delay_us > 1e6) bad("--delay-us must be at most 1000000 microseconds");
  }, "the late side's delay in one-way orders (default 200)");
  cli.custom("--partners", "N", [&](const std::string& v) { o.partners = positive("--partners", v, 4096); },
             "partners per rank, in the other half of the ranks (default 1)");
  cli.custom("--messages", "N", [&](const std::string& v) { o.messages = positive("--messages", v, 4096); },
             "messages per partner and direction (default 1)");
  cli.custom("--layout", "L", [&](const std::string& v) { parse_layout(o, v); },
             "contiguous, or vector:BLOCK:STRIDE (MPI_Type_vector, in doubles)");
  cli.custom("--steps", "LIST", [&](const std::string& v) { o.steps = parse_steps(v); },
             "the compute per measurement as fractions of T_lat: 0.5,1.1 or a range\n"
             "FROM:TO:STEP (default 0.1:1.1:0.1, Kumar's overlap). Steps from 1.5\n"
             "on also give Kumar's progression: when the data had arrived beside a\n"
             "compute longer than the exchange (e.g. --steps 1.5:3:0.1)");
  cli.custom("--iters", "N", [&](const std::string& v) { o.iters = positive("--iters", v, 1000000); },
             "iterations per measurement (default 10)");
  cli.custom("--min-time", "S", [&](const std::string& v) { o.min_time = number("--min-time", v); },
             "at least S seconds per measurement, for small messages (default 0.05)");
  cli.custom("--tasks", "N", [&](const std::string& v) { o.tasks = positive("--tasks", v, 100000); },
             "compute tasks per ASYNC iteration in hytask modes (default 32)");
  cli.custom("--task-us", "U", [&](const std::string& v) {
    o.task_us = number("--task-us", v);
    if (o.task_us < 1 || o.task_us > 1e7) bad("--task-us must be from 1 to 10000000 microseconds");
  }, "instead, compute tasks of U microseconds each (as many as the compute\n"
     "needs, at least one)");
  cli.text("--csv", o.csv, "one row per mode, pattern and size (rank 0)", "FILE");
  cli.text("--json", o.json, "the same, with the options and every step of the T_syn sweep", "FILE");
  cli.text("--plot", o.plot, "overlap against message size, one line per mode (needs gnuplot)", "FILE.png");
  cli.flag("--quiet", o.quiet, "no progress line on stderr");
  cli.app().add_option("--merge", o.merge, "combine the JSON files of earlier runs (no MPI)")->type_name("A.json ...");
  cli.footer(
      "Output (rank 0): a table on stdout, and a progress line on stderr (--quiet: none).\n"
      "The compute is a fixed number of stencil sweeps whose cost is measured once, before MPI\n"
      "starts, so a thread that steals cycles from it shows as lower compute speed and overlap.\n"
      "HYTASK_* variables configure the hytask runtime as usual (HYTASK_THREADS: workers per rank).\n"
      "Exit status: 0 on success, 2 on a usage error, 1 on any other failure.");
  if (!cli.parse(argc, argv, print_help)) return std::nullopt;
  if (o.block != 0)
    for (std::size_t s : o.sizes)
      if (s % (o.block * sizeof(double)) != 0)
        bad("--layout vector:" + std::to_string(o.block) + ":" + std::to_string(o.stride) +
            ": every size must be a multiple of BLOCK doubles, and " + std::to_string(s) +
            " is not");
  return o;
}

}  // namespace overlap
