// Reading a rank's trace into iterations and fractions (trace_phases.hpp, docs/model.md).
#include "trace_phases.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

namespace hytask::model {

namespace {

using json = nlohmann::json;

struct slice {
  double t0 = 0, t1 = 0;  // µs
  bool overlap = false;
};

// The annotation: a task whose name starts with this reads no message of its iteration.
constexpr std::string_view overlap_prefix = "overlap:";

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw trace_error(path + ": " + what); }

double number(const json& e, const char* key) {
  auto it = e.find(key);
  return it != e.end() && it->is_number() ? it->get<double>() : -1.0;
}

std::uint64_t id_of(const json& e) {
  auto a = e.find("args");
  if (a == e.end() || !a->is_object()) return 0;
  auto id = a->find("id");
  return id != a->end() && id->is_number_unsigned() ? id->get<std::uint64_t>() : 0;
}

// The wall time of [s, e) covered by at least one of the slices (sorted by t0), and the time
// each class spent in it, summed over threads.
struct covered {
  double wall = 0, overlap_cpu = 0, non_cpu = 0;
};

covered cover(const std::vector<slice>& sl, std::size_t from, double s, double e) {
  covered c;
  double run_lo = 0, run_hi = -1;  // the current merged interval
  for (std::size_t i = from; i < sl.size() && sl[i].t0 < e; ++i) {
    const double a = std::max(sl[i].t0, s), b = std::min(sl[i].t1, e);
    if (b <= a) continue;
    (sl[i].overlap ? c.overlap_cpu : c.non_cpu) += b - a;
    if (a > run_hi) {
      if (run_hi > run_lo) c.wall += run_hi - run_lo;
      run_lo = a;
      run_hi = b;
    } else {
      run_hi = std::max(run_hi, b);
    }
  }
  if (run_hi > run_lo) c.wall += run_hi - run_lo;
  return c;
}

}  // namespace

rank_phases read_rank(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open the file (" + std::string(std::strerror(errno)) + ")");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    fail(path, std::string("not valid JSON (a run that did not end leaves its trace unterminated): ") + e.what());
  }
  const json* events = nullptr;
  if (doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array()) events = &doc["traceEvents"];
  else if (doc.is_array()) events = &doc;
  if (!events) fail(path, "no \"traceEvents\" array: not a Chrome trace-event file as HYTASK_TRACE writes");
  if (doc.is_object() && doc.contains("otherData") && doc["otherData"].is_object() &&
      doc["otherData"].value("merged", false))
    fail(path, "the job's merged trace (every rank in one file): give the ranks' own files, "
               "run.rank<r>.json, or the HYTASK_TRACE value of the run");

  rank_phases r;
  r.file = path;
  std::set<int> workers;
  struct raw_slice {
    double t0, t1;
    std::uint64_t id;
    bool overlap;
  };
  std::vector<raw_slice> tasks;
  std::vector<double> posts;
  std::set<std::uint64_t> posting_tasks;
  for (const json& e : *events) {
    if (!e.is_object()) continue;
    const std::string ph = e.value("ph", "");
    const std::string name = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "";
    if (r.rank < 0 && e.contains("pid") && e["pid"].is_number_integer()) r.rank = e["pid"].get<int>();
    if (ph == "M") {
      if (name == "thread_name" && e.contains("args") && e["args"].is_object()) {
        const std::string t = e["args"].value("name", "");
        if (t.rfind("worker ", 0) == 0 && e.contains("tid") && e["tid"].is_number_integer())
          workers.insert(e["tid"].get<int>());
      }
      continue;
    }
    const std::string cat = e.value("cat", "");
    const double ts = number(e, "ts");
    if (ts < 0) continue;
    if (ph == "X" && cat == "task") {
      const double dur = std::max(0.0, number(e, "dur"));
      tasks.push_back({ts, ts + dur, id_of(e), name.rfind(overlap_prefix, 0) == 0});
    } else if (ph == "i" && cat == "mpi" && name != "complete") {
      posts.push_back(ts);
      if (const std::uint64_t id = id_of(e); id != 0) posting_tasks.insert(id);
    }
  }
  r.workers = static_cast<int>(workers.size());
  r.posts = posts.size();
  if (posts.empty())
    fail(path, "no MPI post in the trace: trace a run whose communication goes through hytask "
               "(hytask::mpi, or plain MPI calls in tasks with the interception library)");
  std::vector<slice> compute;
  for (const raw_slice& t : tasks) {
    if (t.id != 0 && posting_tasks.count(t.id)) {
      ++r.comm_slices;
      continue;
    }
    (t.overlap ? r.overlap_slices : r.non_slices) += 1;
    compute.push_back({t.t0, t.t1, t.overlap});
  }
  if (compute.empty())
    fail(path, "no compute task in the trace (no task slice that posts no MPI): hytask-model needs the "
               "compute in hytask tasks");
  std::sort(posts.begin(), posts.end());
  std::sort(compute.begin(), compute.end(), [](const slice& a, const slice& b) { return a.t0 < b.t0; });
  double longest = 0;
  for (const slice& s : compute) longest = std::max(longest, s.t1 - s.t0);

  // Iteration starts: the first post, then every post that follows a compute slice started
  // since the current start. Compute slices that span a post mean the run overlapped.
  std::vector<double> starts{posts.front()};
  std::size_t c = 0;
  for (double p : posts) {
    while (c < compute.size() && compute[c].t0 < starts.back()) ++c;
    if (c < compute.size() && compute[c].t0 < p) starts.push_back(p);
  }
  {
    std::size_t i = 0;
    for (double p : posts) {
      while (i < compute.size() && compute[i].t0 <= p - longest) ++i;
      for (std::size_t j = i; j < compute.size() && compute[j].t0 < p; ++j)
        if (compute[j].t1 > p) {
          ++r.tasks_during_comm;
          break;
        }
    }
  }
  std::size_t from = 0;
  for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
    const double s = starts[k], e = starts[k + 1];
    while (from < compute.size() && compute[from].t0 < s - longest) ++from;
    const covered cv = cover(compute, from, s, e);
    iteration it;
    it.start_us = s;
    it.seconds = (e - s) * 1e-6;
    const double len = e - s, cpu = cv.overlap_cpu + cv.non_cpu;
    if (len <= 0) continue;
    const double wall = std::min(cv.wall, len);
    it.overlap = cpu > 0 ? wall * cv.overlap_cpu / cpu / len : 0;
    it.non = cpu > 0 ? wall * cv.non_cpu / cpu / len : 0;
    it.comm = std::max(0.0, 1.0 - it.overlap - it.non);
    r.iterations.push_back(it);
  }
  return r;
}

std::vector<std::string> rank_files(const std::string& path) {
  namespace fs = std::filesystem;
  // HYTASK_TRACE's names: "%r" becomes the rank, else ".rank<r>" before the extension. With
  // several ranks `path` itself is the job's merged trace: the ranks' own files are read.
  auto name_of = [&](int r) {
    if (auto p = path.find("%r"); p != std::string::npos) return path.substr(0, p) + std::to_string(r) + path.substr(p + 2);
    const auto slash = path.find_last_of('/');
    const auto dot = path.find_last_of('.');
    const std::string suffix = ".rank" + std::to_string(r);
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + suffix;
    return path.substr(0, dot) + suffix + path.substr(dot);
  };
  std::vector<std::string> files;
  for (int r = 0; fs::exists(name_of(r)); ++r) files.push_back(name_of(r));
  if (files.empty() && fs::exists(path)) return {path};
  if (files.empty())
    throw trace_error(path + ": no such file, nor per-rank files such as " + name_of(0) +
                      " (the names HYTASK_TRACE=" + path + " writes)");
  return files;
}

totals sum_iterations(const std::vector<iteration>& its) {
  totals t;
  for (const iteration& i : its) {
    t.seconds += i.seconds;
    t.comm += i.comm * i.seconds;
    t.non += i.non * i.seconds;
    t.overlap += i.overlap * i.seconds;
  }
  t.iterations = its.size();
  if (t.seconds > 0) {
    t.comm /= t.seconds;
    t.non /= t.seconds;
    t.overlap /= t.seconds;
  }
  return t;
}

}  // namespace hytask::model
