#include "options.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

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

const char* usage_text() {
  return R"(usage: hytask-overlap [options]                 (under an MPI launcher, an even number of ranks)
       hytask-overlap --merge A.json [B.json ...] [--csv F] [--json F] [--plot F]

Measures how much a non-blocking exchange overlaps computation, per message size, with
plain MPI, with MPI's own progress thread, and with hytask (compute in tasks, communication
through hytask::mpi) under each HYTASK_PROGRESS policy. Ranks pair up across the two halves
of the world ordered by node (with two nodes, every pair spans them) and exchange messages
both ways (as Buettner's benchmark does), or one way (--order). Per size it reports
the overlap ratio of Kumar's thesis (Eq. 4.2), the latency T_lat and its overhead over plain MPI,
the compute speed while communication is pending, when the program saw the exchange
complete and when the data arrived in its buffers (seen by the compute, without MPI), CPU
time per wall time, the cores each node spent on progress threads, resident memory, and the
node agent's counters. Run it across nodes, e.g.
  scripts/cluster.sh run --mpi openmpi -n 2 -- build/tools/hytask-overlap --sizes 1M:16M

what to run:
  --modes LIST      comma-separated, from: mpi, mpi-progress, hytask-workers, hytask-thread,
                    hytask-none, hytask-node (default: mpi,hytask-workers,hytask-thread,
                    hytask-none).
                    mpi-progress (MPICH only) switches on MPICH_ASYNC_PROGRESS for the whole
                    process, so it must run alone; merge its JSON with --merge.
  --sizes LIST      message sizes: 1M,4M or ranges of powers of two, 64K:16M (default 64K:16M)
  --patterns LIST   sync, async, async:X (X progress opportunities spread through the
                    compute: MPI_Testall in plain MPI, task boundaries in hytask; default async)
  --order O         exchange: both directions at once (default); receiver-first: the lower
                    half sends, --delay-us after the upper half has posted its receives and
                    started computing; sender-first: the upper half posts its receives
                    --delay-us after the sends (Kumar, Fig. 4.5). One-way orders time
                    the receivers only.
  --delay-us U      the late side's delay in one-way orders (default 200)
  --partners N      partners per rank, in the other half of the ranks (default 1)
  --messages N      messages per partner and direction (default 1)
  --layout L        contiguous, or vector:BLOCK:STRIDE (MPI_Type_vector, in doubles)
  --steps LIST      the compute per measurement as fractions of T_lat: 0.5,1.1 or a range
                    FROM:TO:STEP (default 0.1:1.1:0.1, Kumar's overlap). Steps from 1.5
                    on also give Kumar's progression: when the data had arrived beside a
                    compute longer than the exchange (e.g. --steps 1.5:3:0.1)
  --iters N         iterations per measurement (default 10)
  --min-time S      at least S seconds per measurement, for small messages (default 0.05)
  --tasks N         compute tasks per ASYNC iteration in hytask modes (default 32)
  --task-us U       instead, compute tasks of U microseconds each (as many as the compute
                    needs, at least one)

output (rank 0):
  a table on stdout, and a progress line on stderr (--quiet: none)
  --csv FILE        one row per mode, pattern and size
  --json FILE       the same, with the options and every step of the T_syn sweep
  --plot FILE.png   overlap against message size, one line per mode (needs gnuplot)

The compute is a fixed number of stencil sweeps whose cost is measured once, before MPI
starts, so a thread that steals cycles from it shows as lower compute speed and overlap.
HYTASK_* variables configure the hytask runtime as usual (HYTASK_THREADS: workers per rank).
Exit status: 0 on success, 2 on a usage error, 1 on any other failure.
)";
}

namespace {

[[noreturn]] void bad(const std::string& what) { throw usage_error(what); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

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

options parse(int argc, char** argv) {
  options o;
  o.modes = parse_modes("mpi,hytask-workers,hytask-thread,hytask-none");
  o.sizes = parse_sizes("64K:16M");
  o.patterns = parse_patterns("async");
  o.steps = parse_steps("0.1:1.1:0.1");
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], value;
    auto eq = a.find('=');
    bool has_inline = a.rfind("--", 0) == 0 && eq != std::string::npos;
    if (has_inline) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    }
    auto next = [&]() -> std::string {
      if (has_inline) return value;
      if (i + 1 >= argc) bad(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") o.help = true;
    else if (a == "--modes") o.modes = parse_modes(next());
    else if (a == "--sizes") o.sizes = parse_sizes(next());
    else if (a == "--patterns") o.patterns = parse_patterns(next());
    else if (a == "--steps") o.steps = parse_steps(next());
    else if (a == "--order") {
      const std::string v = next();
      if (v == "exchange") o.direction = order::exchange;
      else if (v == "receiver-first") o.direction = order::receiver_first;
      else if (v == "sender-first") o.direction = order::sender_first;
      else bad("--order '" + v + "': use exchange, receiver-first or sender-first");
    } else if (a == "--delay-us") {
      o.delay_us = number(a, next());
      if (o.delay_us > 1e6) bad("--delay-us must be at most 1000000 microseconds");
    }
    else if (a == "--partners") o.partners = positive(a, next(), 4096);
    else if (a == "--messages") o.messages = positive(a, next(), 4096);
    else if (a == "--layout") parse_layout(o, next());
    else if (a == "--iters") o.iters = positive(a, next(), 1000000);
    else if (a == "--min-time") o.min_time = number(a, next());
    else if (a == "--tasks") o.tasks = positive(a, next(), 100000);
    else if (a == "--task-us") {
      o.task_us = number(a, next());
      if (o.task_us < 1 || o.task_us > 1e7) bad("--task-us must be from 1 to 10000000 microseconds");
    }
    else if (a == "--csv") o.csv = next();
    else if (a == "--json") o.json = next();
    else if (a == "--plot") o.plot = next();
    else if (a == "--quiet") o.quiet = true;
    else if (a == "--merge") {
      while (i + 1 < argc && argv[i + 1][0] != '-') o.merge.emplace_back(argv[++i]);
      if (o.merge.empty()) bad("--merge needs at least one JSON file");
    } else bad("unknown argument '" + std::string(argv[i]) + "'");
  }
  if (o.block != 0)
    for (std::size_t s : o.sizes)
      if (s % (o.block * sizeof(double)) != 0)
        bad("--layout vector:" + std::to_string(o.block) + ":" + std::to_string(o.stride) +
            ": every size must be a multiple of BLOCK doubles, and " + std::to_string(s) +
            " is not");
  return o;
}

}  // namespace overlap
