// hytask-overlap: does this MPI overlap communication with computation, and how much does
// hytask give? See `hytask-overlap --help` and docs/overlap.md.
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <set>
#include <string>

#include "hytask/hytask.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "report.hpp"

namespace {

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);  // allowed before MPI_Init
  (void)len;
  // The first line, up to its first comma ("Open MPI v4.1.4", "MPICH Version: 4.0.2"), with
  // runs of blanks made one space.
  std::string s;
  for (const char* p = text; *p != '\0' && *p != '\n' && *p != ','; ++p) {
    const bool blank = *p == ' ' || *p == '\t';
    if (blank && (s.empty() || s.back() == ' ')) continue;
    s += blank ? ' ' : *p;
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string flavour(const std::string& library) {
  if (library.find("Open MPI") != std::string::npos) return "openmpi";
  if (library.find("MPICH") != std::string::npos) return "mpich";
  return "mpi";
}

int usage_failure(const std::string& message) {
  if (hytask_cli::launcher_rank_zero())
    std::fputs(hytask_cli::error_text("hytask-overlap", message).c_str(), stderr);
  return 2;
}

void write_outputs(overlap::report& rep, const overlap::options& opt) {
  rep.fill_overheads();
  rep.print_table(stdout);
  std::fflush(stdout);
  if (!opt.csv.empty()) rep.write_csv(opt.csv);
  if (!opt.json.empty()) rep.write_json(opt.json);
  if (!opt.plot.empty()) rep.write_plot(opt.plot);
}

// Prints what is being measured on one line: rewritten in place on a terminal, one line per
// (size, mode) otherwise.
struct progress_line {
  bool tty = isatty(STDERR_FILENO) != 0;
  std::string prefix;
  void show(const std::string& what) {
    if (tty) std::fprintf(stderr, "\r\033[K[hytask-overlap] %s %s", prefix.c_str(), what.c_str());
  }
  void finished(const std::string& what) {
    if (tty) std::fprintf(stderr, "\r\033[K");
    std::fprintf(stderr, "[hytask-overlap] %s %s\n", prefix.c_str(), what.c_str());
  }
};

unsigned distinct_network_namespaces(int size) {
  struct stat st {};
  unsigned long long mine = stat("/proc/self/ns/net", &st) == 0 ? st.st_ino : 0;
  std::vector<unsigned long long> all(static_cast<std::size_t>(size));
  MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG,
                MPI_COMM_WORLD);
  return static_cast<unsigned>(std::set<unsigned long long>(all.begin(), all.end()).size());
}

}  // namespace

int main(int argc, char** argv) {
  overlap::options opt;
  try {
    std::optional<overlap::options> parsed = overlap::parse(argc, argv, hytask_cli::launcher_rank_zero());
    if (!parsed) return 0;  // --help
    opt = std::move(*parsed);
  } catch (const overlap::usage_error& e) {
    return usage_failure(e.what());
  }
  if (!opt.merge.empty()) {  // no MPI: combine earlier runs
    try {
      overlap::report rep;
      for (const auto& f : opt.merge) rep.add_json(f);
      write_outputs(rep, opt);
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "hytask-overlap: %s\n", e.what());
      return 1;
    }
  }

  const std::string library = library_version();
  const std::string mpi = flavour(library);
  const bool progress_mode = opt.modes.front() == overlap::mode::mpi_progress;
  const char* async_env = std::getenv("MPICH_ASYNC_PROGRESS");
  const bool async_set = async_env && std::strcmp(async_env, "0") != 0;
  if (progress_mode && mpi != "mpich")
    return usage_failure("--modes mpi-progress: this binary uses " + library +
                         ", which has no progress thread of its own (MPICH has: use "
                         "hytask-overlap-mpich, or a build against MPICH)");
  if (async_set && !progress_mode)
    return usage_failure(
        "MPICH_ASYNC_PROGRESS is set, which gives every mode MPICH's progress thread; unset it, "
        "or measure that thread with --modes mpi-progress");
  if (progress_mode) setenv("MPICH_ASYNC_PROGRESS", "1", 1);  // read by MPI_Init_thread

  // The work's cost is measured before MPI starts: no progress thread exists yet.
  const double unit_ns_local = overlap::calibrate_unit_ns();

  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto fail = [&](int status, const std::string& message) {
    if (rank == 0) {
      if (status == 2) usage_failure(message);
      else std::fprintf(stderr, "hytask-overlap: %s\n", message.c_str());
    }
    MPI_Finalize();
    return status;
  };
  if (provided < MPI_THREAD_MULTIPLE)
    return fail(1, "this MPI provides thread level " + std::to_string(provided) +
                       ", below MPI_THREAD_MULTIPLE, which hytask's tasks and MPI's progress "
                       "thread need");
  if (size < 2 || size % 2 != 0)
    return fail(2, "needs an even number of ranks, at least 2, and has " + std::to_string(size) +
                       ": run it with mpiexec -n 2, or scripts/cluster.sh run -n 2 -- "
                       "hytask-overlap (a launcher of another MPI than " + library +
                       " starts it as separate single ranks)");
  if (opt.partners > static_cast<unsigned>(size / 2))
    return fail(2, "--partners " + std::to_string(opt.partners) + ": each rank has at most " +
                       std::to_string(size / 2) + " partners among " + std::to_string(size) +
                       " ranks");

  // The mean over ranks, so that every rank does the same work.
  double unit_ns = 0;
  MPI_Allreduce(&unit_ns_local, &unit_ns, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  unit_ns /= size;
  const unsigned nodes = distinct_network_namespaces(size);

  overlap::run_info info;
  info.mpi = mpi;
  info.library = library;
  info.hytask_version = hytask::version;
  info.ranks = static_cast<unsigned>(size);
  info.nodes = nodes;
  info.unit_ns = unit_ns;
  for (int i = 0; i < argc; ++i) info.command += (i ? " " : "") + std::string(argv[i]);

  progress_line line;
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  // Placement: the world's ranks ordered by their node's first rank, then by rank.
  int leader = rank;
  MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, node);
  std::vector<int> leaders(static_cast<std::size_t>(size));
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> placed(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) placed[static_cast<std::size_t>(i)] = i;
  std::stable_sort(placed.begin(), placed.end(), [&](int a, int b) {
    return leaders[static_cast<std::size_t>(a)] < leaders[static_cast<std::size_t>(b)];
  });
  overlap::context ctx{opt, rank, size, unit_ns, mpi, nodes, node, placed, {}};
  if (rank == 0 && !opt.quiet) ctx.progress = [&line](const std::string& s) { line.show(s); };
  if (rank == 0 && nodes < 2 && !opt.quiet)
    std::fprintf(stderr,
                 "[hytask-overlap] warning: every rank shares one network namespace, so messages "
                 "may go through shared memory or loopback; scripts/cluster.sh makes nodes.\n");

  try {
    std::vector<overlap::row> rows;
    const std::size_t total = opt.sizes.size() * opt.modes.size();
    std::size_t done = 0;
    // Sizes outermost and modes inside, so that the modes compared at one size are measured
    // minutes, not hours, apart.
    for (std::size_t bytes : opt.sizes)
      for (overlap::mode m : opt.modes) {
        line.prefix = "[" + std::to_string(++done) + "/" + std::to_string(total) + "] " + mpi +
                      " " + std::to_string(bytes) + " B";
        auto measured = overlap::measure(ctx, m, bytes);
        if (rank == 0 && !opt.quiet) {
          char what[96];
          std::snprintf(what, sizeof what, "%s: overlap %.1f %%, T_lat %.1f us", overlap::name(m),
                        measured.front().chosen.overlap_pct, measured.front().t_lat_us);
          line.finished(what);
        }
        rows.insert(rows.end(), measured.begin(), measured.end());
      }
    if (rank == 0) {
      overlap::report rep;
      rep.add(info, rows);
      write_outputs(rep, opt);
    }
  } catch (const std::exception& e) {
    // Exit with an error rather than MPI_Abort: the launcher then ends the job after it has
    // forwarded this message, which MPICH's MPI_Abort sometimes drops (benchmarks' Task
    // Bench lost its whole output in 7 of 300 aborted runs).
    std::fprintf(stderr, "hytask-overlap: rank %d: %s\n", rank, e.what());
    std::fflush(stderr);
    std::fflush(stdout);
    std::_Exit(1);
  }
  MPI_Comm_free(&node);
  MPI_Finalize();
  return 0;
}
