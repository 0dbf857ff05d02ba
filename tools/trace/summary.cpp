#include "summary.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <set>
#include <stdexcept>

#include "trace/event_line.hpp"

namespace hytask::trace_tool {

std::int64_t rank_summary::idle_ns() const {
  const std::int64_t all = span_ns() * workers;
  return std::max<std::int64_t>(0, all - busy_ns - mpi_workers_ns);
}

std::map<int, rank_summary> summarize(const std::vector<std::string>& files) {
  std::map<int, rank_summary> ranks;
  std::set<std::pair<int, std::int64_t>> workers;
  struct pending_poll {
    int pid;
    std::int64_t tid, ns;
  };
  std::vector<pending_poll> polls;  // tid's kind is known only once its name is read
  std::map<int, bool> seen;
  trace::event e;
  for (const std::string& path : files) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error("hytask-trace: cannot read '" + path + "'");
    std::string line;
    while (std::getline(f, line)) {
      if (!trace::parse_event(line, e)) continue;
      const int pid = static_cast<int>(e.number("pid").value_or(0));
      const auto tid = static_cast<std::int64_t>(e.number("tid").value_or(0));
      const std::string ph = e.text("ph"), name = e.text("name"), cat = e.text("cat");
      rank_summary& r = ranks[pid];
      if (ph == "M") {
        if (name == "thread_name" && e.arg_text("name").rfind("worker", 0) == 0) workers.insert({pid, tid});
        continue;
      }
      const auto ts = e.ts_ns();
      if (!ts || cat == "mpi-flow") continue;
      const std::int64_t dur = ph == "X" ? e.dur_ns() : 0;
      if (!seen[pid]) {
        seen[pid] = true;
        r.first_ns = *ts;
        r.last_ns = *ts + dur;
      }
      r.first_ns = std::min(r.first_ns, *ts);
      r.last_ns = std::max(r.last_ns, *ts + dur);
      if (ph == "X" && cat == "task") {
        task_total& t = r.tasks[name];
        ++t.stretches;
        t.ns += dur;
        if (e.arg_text("event") == "end") ++t.runs;
        polls.push_back({pid, tid, -dur - 1});  // a task stretch: counted as busy if a worker's
      } else if (ph == "X" && name == "poll") {
        r.mpi_ns += dur;
        ++r.polls;
        polls.push_back({pid, tid, dur});
      } else if (ph == "i" && cat == "mpi") {
        if (e.arg_int("send_seq")) ++r.sends;
        if (e.arg_int("recv_seq")) ++r.receives;
        if (name != "complete") ++r.posts;
      } else if (ph == "i" && name == "node wake") {
        ++r.wakes;
      } else if (ph == "i" && name == "node wake suppressed") {
        ++r.suppressed_wakes;
      }
    }
  }
  for (const pending_poll& p : polls) {
    if (!workers.count({p.pid, p.tid})) continue;
    rank_summary& r = ranks[p.pid];
    if (p.ns < 0) r.busy_ns += -p.ns - 1;
    else r.mpi_workers_ns += p.ns;
  }
  for (const auto& [pid, tid] : workers) ++ranks[pid].workers;
  return ranks;
}

namespace {

std::string ms(std::int64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f ms", static_cast<double>(ns) / 1e6);
  return b;
}

std::string pct(std::int64_t part, std::int64_t whole) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return b;
}

}  // namespace

void print(std::ostream& out, const std::map<int, rank_summary>& ranks) {
  for (const auto& [pid, r] : ranks) {
    const std::int64_t worker_time = r.span_ns() * r.workers;
    out << "rank " << pid << ": span " << ms(r.span_ns()) << ", " << r.workers << " workers\n"
        << "  busy " << ms(r.busy_ns) << " (" << pct(r.busy_ns, worker_time) << " of the workers' time), idle "
        << ms(r.idle_ns()) << " (" << pct(r.idle_ns(), worker_time) << "), in MPI polls " << ms(r.mpi_ns)
        << "\n"
        << "  polls " << r.polls << ", MPI posts " << r.posts << ", sends " << r.sends << ", receives "
        << r.receives;
    if (r.wakes || r.suppressed_wakes) out << ", node wakes " << r.wakes << " (suppressed " << r.suppressed_wakes << ")";
    out << "\n";
    for (const auto& [name, t] : r.tasks)
      out << "  task " << trace::quote(name) << ": " << t.runs << " runs, " << t.stretches << " stretches, "
          << ms(t.ns) << "\n";
  }
}

}  // namespace hytask::trace_tool
