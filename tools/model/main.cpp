// hytask-model: Rabenseifner and Wellein's performance model applied to a traced run
// (docs/model.md). Reads the per-rank traces of a masteronly-style run, measures f_comm,
// f_comp,non and f_comp,overlap per rank and iteration, and predicts what each hybrid scheme
// would gain over it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "model.hpp"
#include "trace_phases.hpp"

namespace {

using namespace hytask::model;

std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", 100.0 * v);
  return b;
}

int run(int argc, char** argv) {
  int threads = 0;
  bool per_iteration = false;
  std::vector<std::string> args;
  hytask_cli::command_line cli(
      "hytask-model", "[--threads N] [--per-iteration] TRACE...",
      "Applies Rabenseifner and Wellein's model of hybrid MPI + threads programs to a hytask trace of\n"
      "a run in masteronly style (main communicates, then tasks compute), and predicts the gain of\n"
      "each scheme over it: funneled, serialized, multiple (m threads communicating),\n"
      "overlap-funnel-reserve, and hytask tasks.");
  cli.positionals("TRACE", args,
                  "the HYTASK_TRACE value of the run (every rank's file, run.rank<r>.json, is\n"
                  "read), or the rank files themselves");
  cli.custom("--threads", "N", [&](const std::string& v) {
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < 2 || n > 4096)
      throw hytask_cli::usage_error("--threads '" + v + "': expected an integer from 2 to 4096 (the model needs a thread "
                                    "to compute besides one that communicates)");
    threads = static_cast<int>(n);
  }, "threads per rank n that the predictions assume (default: the hytask workers\nin the trace)");
  cli.flag("--per-iteration", per_iteration, "also print every iteration's time and fractions, per rank");
  cli.footer("Mark the tasks whose work reads none of the iteration's messages by a name starting with\n"
             "\"overlap:\" (hytask::spawn({.name = \"overlap:inner\"}, ...)): they are f_comp,overlap; every\n"
             "other task is f_comp,non. An iteration runs from an MPI post that follows compute to the next\n"
             "such post. See docs/model.md.");
  if (!cli.parse(argc, argv)) return 0;
  if (args.empty()) throw hytask_cli::usage_error("no trace given");

  std::vector<std::string> files;
  for (const std::string& a : args)
    for (std::string& f : rank_files(a)) files.push_back(std::move(f));
  std::vector<rank_phases> ranks;
  for (const std::string& f : files) ranks.push_back(read_rank(f));

  int workers = 0;
  std::set<int> seen;
  std::vector<iteration> all;
  std::size_t overlap_slices = 0, during = 0;
  for (const rank_phases& r : ranks) {
    if (!seen.insert(r.rank).second)
      throw trace_error(r.file + ": rank " + std::to_string(r.rank) + " is given twice (two runs' files mixed?)");
    if (r.iterations.empty())
      throw trace_error(r.file + ": no complete iteration: it needs two communication phases with compute "
                                 "between them (" + std::to_string(r.posts) + " MPI posts in the file)");
    workers = std::max(workers, r.workers);
    overlap_slices += r.overlap_slices;
    during += r.tasks_during_comm;
    all.insert(all.end(), r.iterations.begin(), r.iterations.end());
  }
  const int n = threads > 0 ? threads : workers;

  std::printf("hytask-model: %zu rank%s; the trace shows %d worker%s per rank; the predictions use n = %d threads%s\n",
              ranks.size(), ranks.size() == 1 ? "" : "s", workers, workers == 1 ? "" : "s", n,
              threads > 0 ? " (--threads)" : "");
  std::printf("(an iteration: from an MPI post that follows compute to the next one; fractions of its time)\n\n");
  std::printf("%-5s %-10s %9s %9s %11s %15s   %s\n", "rank", "iterations", "ms/iter", "f_comm", "f_comp,non",
              "f_comp,overlap", "f_comm per iteration (min-max)");
  for (const rank_phases& r : ranks) {
    const totals t = sum_iterations(r.iterations);
    double lo = 1, hi = 0;
    for (const iteration& i : r.iterations) {
      lo = std::min(lo, i.comm);
      hi = std::max(hi, i.comm);
    }
    std::printf("%-5d %-10zu %9.3f %9.3f %11.3f %15.3f   %.3f-%.3f\n", r.rank, t.iterations,
                1e3 * t.seconds / static_cast<double>(t.iterations), t.comm, t.non, t.overlap, lo, hi);
  }
  const totals t = sum_iterations(all);
  if (per_iteration) {
    std::printf("\n%-5s %-10s %12s %9s %9s %11s %15s\n", "rank", "iteration", "start (ms)", "ms", "f_comm",
                "f_comp,non", "f_comp,overlap");
    for (const rank_phases& r : ranks)
      for (std::size_t k = 0; k < r.iterations.size(); ++k) {
        const iteration& i = r.iterations[k];
        std::printf("%-5d %-10zu %12.3f %9.3f %9.3f %11.3f %15.3f\n", r.rank, k, 1e-3 * i.start_us, 1e3 * i.seconds,
                    i.comm, i.non, i.overlap);
      }
    std::printf("\n");
  }
  std::printf("%-5s %-10zu %9.3f %9.3f %11.3f %15.3f   (sum %.3f)\n\n", "all", t.iterations,
              1e3 * t.seconds / static_cast<double>(t.iterations), t.comm, t.non, t.overlap, t.comm + t.non + t.overlap);
  if (overlap_slices == 0)
    std::printf("note: no task is named \"overlap:...\": all compute counts as non-overlappable, and no scheme can\n"
                "      gain by this model. Name the tasks that read none of the iteration's messages \"overlap:...\".\n\n");
  if (during > 0)
    std::printf("note: %zu MPI post%s happened while compute tasks ran: this run already overlaps, so its\n"
                "      fractions are not masteronly's and the predictions are relative to this run.\n\n",
                during, during == 1 ? "" : "s");
  if (threads > 0 && workers > 0 && threads != workers)
    std::printf("note: the fractions are those of the traced run with %d worker%s; the predictions for n = %d use\n"
                "      them as they are (a run with %d threads would have shorter compute phases).\n\n",
                workers, workers == 1 ? "" : "s", n, n);
  if (n < 2) {
    std::printf("The model needs n >= 2 threads per rank (one communicates while the others compute): "
                "rerun with HYTASK_THREADS=2 or more, or give --threads.\n");
    return 0;
  }

  fractions f{.comm = t.comm, .non = t.non, .overlap = t.overlap};
  const double s = f.comm + f.non + f.overlap;  // 1 up to rounding; renormalised for the checks
  f.comm /= s;
  f.non /= s;
  f.overlap /= s;
  const int mb = best_m(f, n);
  const double e1 = epsilon(f, n, 1), emb = epsilon(f, n, mb), et = epsilon_tasks(f, n, 1), ei = epsilon_ideal(f);
  char multiple[48];
  std::snprintf(multiple, sizeof multiple, "multiple, m = %d (best)", mb);
  std::printf("%-28s %-46s %9s\n", "scheme", "who calls MPI", "predicted");
  std::printf("%-28s %-46s %8.2fx\n", "masteronly (the trace)", "main, while the other threads idle", 1.0);
  std::printf("%-28s %-46s %8.2fx\n", "funneled", "main, while n-1 threads compute (m = 1)", e1);
  std::printf("%-28s %-46s %8.2fx\n", "serialized", "one thread at a time (m = 1)", e1);
  std::printf("%-28s %-46s %8.2fx\n", multiple, "m threads, while n-m compute", emb);
  std::printf("%-28s %-46s %8.2fx\n", "overlap-funnel-reserve", "main reserved for MPI, n-1 compute (m = 1)", e1);
  std::printf("%-28s %-46s %8.2fx\n", "hytask tasks", "any worker, computing when not communicating", et);
  std::printf("%-28s %-46s %8.2fx\n\n", "perfect overlap (bound)", "no thread lost, communication fully hidden", ei);
  if (n > 2) {
    std::printf("multiple, eq. (3) for each m:");
    for (int m = 1; m < n && m <= 16; ++m) std::printf(" m=%d %.2fx", m, epsilon(f, n, m));
    std::printf("\n");
  }
  std::printf("m = 1, n = %d, f_comp,non = %.3f: eq. (5) eps_max %.2fx at eq. (6) f_comm,best %s; eq. (9) eps_min %.3fx;\n"
              "  break-even f_comm,equiv %s (reserving a thread pays only above it); eq. (7) bound %.3fx\n\n",
              n, f.non, epsilon_max(f.non, n, 1), pct(f_comm_best(f.non, n, 1)).c_str(), epsilon_min(f.non, n, 1),
              pct(f_comm_equiv(f.non, n, 1)).c_str(), epsilon_bound(n, 1));

  // What to do about it.
  std::printf("Your communication is %s of the masteronly run and %s of it is compute that could overlap it.\n",
              pct(f.comm).c_str(), pct(f.overlap).c_str());
  std::printf("Overlapping can gain at most %.2fx (perfect overlap); tasks with %d workers reach %.2fx by this model.\n",
              ei, n, et);
  if (f.comm > f_comm_equiv(f.non, n, 1))
    std::printf("Reserving one of %d threads for MPI (funneled, overlap-funnel-reserve) gains %.2fx: f_comm is above the\n"
                "break-even %s.",
                n, e1, pct(f_comm_equiv(f.non, n, 1)).c_str());
  else
    std::printf("Reserving one of %d threads for MPI (funneled, overlap-funnel-reserve) loses (%.2fx): f_comm is below the\n"
                "break-even %s, so the compute lost on the reserved thread outweighs the hidden communication.",
                n, e1, pct(f_comm_equiv(f.non, n, 1)).c_str());
  if (f.comm > f.overlap && mb > 1)
    std::printf(" Communication outlasts the overlappable compute:\nif more threads move the data faster (a network "
                "one thread cannot fill), %d communicating threads (multiple) reach %.2fx;\notherwise only making more "
                "of the compute independent of the messages (or the messages smaller) gains more.\n",
                mb, emb);
  else if (f.comm > f.overlap)
    std::printf(" Communication outlasts the overlappable compute:\nmore of the compute must become independent of "
                "the messages (or the messages smaller) before more threads help.\n");
  else
    std::printf(" The overlappable compute outlasts the communication:\nthe communicating thread would idle; "
                "tasks let it return to the compute.\n");
  std::printf("The model assumes one core per thread, communication that speeds up with m, compute that scales\n"
              "with threads, and free splitting of the work; see docs/model.md.\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const hytask_cli::usage_error& e) {
    std::fputs(hytask_cli::error_text("hytask-model", e.what()).c_str(), stderr);
    return 2;
  } catch (const trace_error& e) {
    std::fprintf(stderr, "hytask-model: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hytask-model: %s\n", e.what());
    return 1;
  }
}
