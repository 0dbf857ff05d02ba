#include "report.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace overlap {
namespace {

using json = nlohmann::ordered_json;

std::string human(std::size_t bytes) {
  char buf[32];
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
    std::snprintf(buf, sizeof buf, "%zu MiB", bytes >> 20);
  else if (bytes >= 1024 && bytes % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%zu KiB", bytes >> 10);
  else
    std::snprintf(buf, sizeof buf, "%zu B", bytes);
  return buf;
}

json step_json(const step_result& s) {
  return {{"fraction", s.fraction},       {"t_syn_us", s.t_syn_us}, {"t_et_us", s.t_et_us},
          {"overlap_pct", s.overlap_pct}, {"speed_pct", s.speed_pct}, {"done_us", s.done_us},
          {"arrived_us", s.arrived_us},   {"within", s.within}};
}

step_result step_from(const json& j) {
  step_result s;
  s.fraction = j.at("fraction").get<double>();
  s.t_syn_us = j.at("t_syn_us").get<double>();
  s.t_et_us = j.at("t_et_us").get<double>();
  s.overlap_pct = j.at("overlap_pct").get<double>();
  s.speed_pct = j.at("speed_pct").get<double>();
  s.done_us = j.at("done_us").get<double>();
  s.arrived_us = j.value("arrived_us", s.done_us);  // files written before it was measured
  s.within = j.at("within").get<bool>();
  return s;
}

// Rows that describe the same experiment except for the mode.
bool same_shape(const row& a, const row& b) {
  return a.mpi == b.mpi && a.bytes == b.bytes && a.partners == b.partners &&
         a.messages == b.messages && a.layout == b.layout && a.ranks == b.ranks &&
         a.order == b.order && a.nodes == b.nodes;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

void report::add(const run_info& info, const std::vector<row>& measured) {
  runs.push_back(info);
  for (const auto& r : measured) {
    rows.push_back(r);
    run_of.push_back(runs.size() - 1);
  }
}

void report::add_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open it");
  json doc;
  try {
    doc = json::parse(in);
    if (doc.value("tool", "") != "hytask-overlap")
      throw std::runtime_error("not written by hytask-overlap --json");
    const std::size_t base = runs.size();
    for (const auto& j : doc.at("runs")) {
      run_info info;
      info.mpi = j.at("mpi").get<std::string>();
      info.library = j.at("library").get<std::string>();
      info.hytask_version = j.at("hytask_version").get<std::string>();
      info.ranks = j.at("ranks").get<unsigned>();
      info.nodes = j.at("nodes").get<unsigned>();
      info.unit_ns = j.at("unit_ns").get<double>();
      info.command = j.at("command").get<std::string>();
      runs.push_back(info);
    }
    for (const auto& j : doc.at("results")) {
      row r;
      const auto run = j.at("run").get<std::size_t>();
      if (base + run >= runs.size()) throw std::runtime_error("a result names a missing run");
      r.mpi = j.at("mpi").get<std::string>();
      r.mode = j.at("mode").get<std::string>();
      r.pattern = j.at("pattern").get<std::string>();
      r.layout = j.at("layout").get<std::string>();
      r.bytes = j.at("bytes").get<std::size_t>();
      r.partners = j.at("partners").get<unsigned>();
      r.messages = j.at("messages").get<unsigned>();
      r.ranks = j.at("ranks").get<unsigned>();
      r.nodes = j.at("nodes").get<unsigned>();
      r.threads = j.at("threads").get<unsigned>();
      r.iterations = j.at("iterations").get<unsigned>();
      r.t_lat_us = j.at("t_lat_us").get<double>();
      r.cpu_per_wall = j.at("cpu_per_wall").get<double>();
      r.rss_kib = j.at("rss_kib").get<double>();
      // Added later: files of earlier versions have none.
      r.order = j.value("order", std::string("exchange"));
      r.progress_cores = j.value("progress_cores", 0.0);
      r.wakes = j.value("wakes", std::uint64_t{0});
      r.futile = j.value("futile", std::uint64_t{0});
      r.completed = j.value("completed", std::uint64_t{0});
      r.suppressed = j.value("suppressed", std::uint64_t{0});
      r.chosen = step_from(j.at("chosen"));
      for (const auto& s : j.at("steps")) r.steps.push_back(step_from(s));
      rows.push_back(std::move(r));
      run_of.push_back(base + run);
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not a valid hytask-overlap JSON file (" + e.what() + ")");
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

void report::fill_overheads() {
  for (auto& r : rows) {
    r.overhead_us.reset();
    for (const auto& base : rows)
      if (base.mode == "mpi" && same_shape(base, r)) {
        r.overhead_us = r.t_lat_us - base.t_lat_us;
        break;
      }
  }
}

void report::print_table(std::FILE* out) const {
  for (const auto& run : runs)
    std::fprintf(out, "# %s, %u ranks on %u node%s, work unit %.0f ns\n", run.library.c_str(),
                 run.ranks, run.nodes, run.nodes == 1 ? "" : "s", run.unit_ns);
  if (!rows.empty() && rows.front().order != "exchange")
    std::fprintf(out, "# %s: the lower half of the ranks sends, the upper half receives and is "
                      "timed\n", rows.front().order.c_str());
  bool node = false;
  for (const auto& r : rows) node = node || r.wakes != 0 || r.suppressed != 0;
  std::fprintf(out,
               "%-9s %-7s %-15s %-9s %8s %9s %9s %8s %9s %9s %6s %8s %8s%s\n", "size", "mpi",
               "mode", "pattern", "overlap", "T_lat", "+latency", "compute", "T_syn", "done",
               "CPU", "RSS", "progress", node ? "  node agent: wakes futile completing suppressed" : "");
  std::fprintf(out, "%-9s %-7s %-15s %-9s %8s %9s %9s %8s %9s %9s %6s %8s %8s\n", "", "", "", "",
               "%", "us", "us", "speed %", "/T_lat", "us", "cores", "MiB", "cores/nd");
  std::size_t last = 0;
  bool first = true;
  for (const auto& r : rows) {
    if (!first && r.bytes != last) std::fprintf(out, "\n");
    first = false;
    last = r.bytes;
    char over[32] = "-";
    if (r.overhead_us) std::snprintf(over, sizeof over, "%+.1f", *r.overhead_us);
    std::fprintf(out, "%-9s %-7s %-15s %-9s %7.1f%s %9.1f %9s %8.1f %9.2f %9.0f %6.2f %8.1f %8.3f",
                 human(r.bytes).c_str(), r.mpi.c_str(), r.mode.c_str(), r.pattern.c_str(),
                 r.chosen.overlap_pct, r.chosen.within ? " " : "*", r.t_lat_us, over,
                 r.chosen.speed_pct, r.chosen.fraction, r.chosen.done_us, r.cpu_per_wall,
                 r.rss_kib / 1024, r.progress_cores);
    if (r.wakes != 0 || r.suppressed != 0) {
      const double w = static_cast<double>(r.wakes ? r.wakes : 1);
      std::fprintf(out, "  %8llu %5.1f%% %9.1f%% %10llu", static_cast<unsigned long long>(r.wakes),
                   100.0 * static_cast<double>(r.futile) / w,
                   100.0 * static_cast<double>(r.completed) / w,
                   static_cast<unsigned long long>(r.suppressed));
    }
    std::fprintf(out, "\n");
  }
  bool any_outside = false;
  for (const auto& r : rows) any_outside = any_outside || !r.chosen.within;
  std::fprintf(out,
               "\noverlap: Kumar's Eq. 4.2, (T_syn - (T_et - T_lat)) / T_lat at the largest "
               "compute T_syn for which\nT_et <= 1.1 T_lat on every rank. compute speed: the "
               "compute's cost before MPI started / its time here.\ndone: when the program saw "
               "the exchange complete. CPU: CPU time per wall time, per rank. progress: CPU per wall\ntime "
               "of the threads that only progress communication (hytask's progress thread and "
               "node agent,\nthe MPI library's threads), summed over a node's ranks. node agent: "
               "wakes sent, the share whose poll\nfound nothing pending (futile) or completed an "
               "operation, wakes withheld while the rank was in MPI.\n");
  if (any_outside)
    std::fprintf(out, "*: no step kept T_et within 1.1 T_lat; the step nearest T_syn = T_lat is "
                      "shown.\n");
  print_progression(out);
}

// Seed 002's asynchronous progression (sect. 4.3.3): with a compute longer than the exchange
// (T_syn from 1.5 T_lat), the time until the data had arrived. A library that moves the
// data only inside MPI calls gives about T_syn (it arrives in the final wait); one that
// progresses on its own a flat line near T_lat.
void report::print_progression(std::FILE* out) const {
  std::vector<double> fractions;
  for (const auto& r : rows)
    for (const auto& s : r.steps)
      if (s.fraction >= 1.5 - 1e-9) {
        bool known = false;
        for (double f : fractions) known = known || std::abs(f - s.fraction) < 1e-9;
        if (!known) fractions.push_back(s.fraction);
      }
  if (fractions.empty()) return;
  std::sort(fractions.begin(), fractions.end());
  std::fprintf(out, "\nprogression (Kumar): when the data had arrived, in units of plain MPI's "
                    "T_lat (else the mode's own), at T_syn / T_lat =\n%-9s %-7s %-15s %-9s",
               "size", "mpi", "mode", "pattern");
  for (double f : fractions) std::fprintf(out, " %6.2f", f);
  std::fprintf(out, "\n");
  for (const auto& r : rows) {
    double base = r.t_lat_us;
    for (const auto& b : rows)
      if (b.mode == "mpi" && same_shape(b, r) && b.t_lat_us > 0) base = b.t_lat_us;
    std::fprintf(out, "%-9s %-7s %-15s %-9s", human(r.bytes).c_str(), r.mpi.c_str(),
                 r.mode.c_str(), r.pattern.c_str());
    for (double f : fractions) {
      const step_result* hit = nullptr;
      for (const auto& s : r.steps)
        if (std::abs(s.fraction - f) < 1e-9) hit = &s;
      if (hit) std::fprintf(out, " %6.2f", hit->arrived_us / base);
      else std::fprintf(out, " %6s", "-");
    }
    std::fprintf(out, "\n");
  }
}

void report::write_csv(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(path + ": cannot write it");
  out << "mpi,mode,pattern,bytes,partners,messages,layout,ranks,nodes,threads,iterations,"
         "t_lat_us,latency_overhead_us,t_syn_fraction,t_syn_us,t_et_us,overlap_pct,within_limit,"
         "compute_speed_pct,done_us,cpu_per_wall,rss_kib,order,progress_cores,wakes,futile,"
         "completed,suppressed,arrived_us\n";
  out.precision(6);
  for (const auto& r : rows) {
    out << csv_field(r.mpi) << ',' << csv_field(r.mode) << ',' << csv_field(r.pattern) << ','
        << r.bytes << ',' << r.partners << ',' << r.messages << ',' << csv_field(r.layout) << ','
        << r.ranks << ',' << r.nodes << ',' << r.threads << ',' << r.iterations << ','
        << r.t_lat_us << ',';
    if (r.overhead_us) out << *r.overhead_us;
    out << ',' << r.chosen.fraction << ',' << r.chosen.t_syn_us << ',' << r.chosen.t_et_us << ','
        << r.chosen.overlap_pct << ',' << (r.chosen.within ? 1 : 0) << ',' << r.chosen.speed_pct
        << ',' << r.chosen.done_us << ',' << r.cpu_per_wall << ',' << r.rss_kib << ','
        << csv_field(r.order) << ',' << r.progress_cores << ',' << r.wakes << ',' << r.futile
        << ',' << r.completed << ',' << r.suppressed << ',' << r.chosen.arrived_us << '\n';
  }
  if (!out) throw std::runtime_error(path + ": write failed");
}

void report::write_json(const std::string& path) const {
  json doc;
  doc["tool"] = "hytask-overlap";
  doc["format"] = 1;
  doc["runs"] = json::array();
  for (const auto& run : runs)
    doc["runs"].push_back({{"mpi", run.mpi},
                           {"library", run.library},
                           {"hytask_version", run.hytask_version},
                           {"ranks", run.ranks},
                           {"nodes", run.nodes},
                           {"unit_ns", run.unit_ns},
                           {"command", run.command}});
  doc["results"] = json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const row& r = rows[i];
    json j = {{"run", run_of[i]},       {"mpi", r.mpi},
              {"mode", r.mode},         {"pattern", r.pattern},
              {"layout", r.layout},     {"bytes", r.bytes},
              {"partners", r.partners}, {"messages", r.messages},
              {"ranks", r.ranks},       {"nodes", r.nodes},
              {"threads", r.threads},   {"iterations", r.iterations},
              {"t_lat_us", r.t_lat_us}, {"cpu_per_wall", r.cpu_per_wall},
              {"rss_kib", r.rss_kib},   {"order", r.order},
              {"progress_cores", r.progress_cores}, {"wakes", r.wakes},
              {"futile", r.futile},     {"completed", r.completed},
              {"suppressed", r.suppressed}};
    j["latency_overhead_us"] = r.overhead_us ? json(*r.overhead_us) : json(nullptr);
    j["chosen"] = step_json(r.chosen);
    j["steps"] = json::array();
    for (const auto& s : r.steps) j["steps"].push_back(step_json(s));
    doc["results"].push_back(std::move(j));
  }
  std::ofstream out(path);
  if (!out) throw std::runtime_error(path + ": cannot write it");
  out << doc.dump(2) << '\n';
  if (!out) throw std::runtime_error(path + ": write failed");
}

void report::write_plot(const std::string& path) const {
  // One series per (MPI, mode, pattern), in the order they first appear.
  std::vector<std::string> keys;
  std::map<std::string, std::vector<const row*>> series;
  std::map<std::string, int> patterns;
  for (const auto& r : rows) patterns[r.pattern] = 1;
  for (const auto& r : rows) {
    std::string key = r.mpi + " " + r.mode + (patterns.size() > 1 ? " " + r.pattern : "") +
                      (r.order != "exchange" ? " " + r.order : "");
    if (!series.count(key)) keys.push_back(key);
    series[key].push_back(&r);
  }
  std::ostringstream script;
  script << "set terminal pngcairo size 960,600 font 'sans,11'\n"
         << "set output '" << path << "'\n"
         << "set title 'Communication/computation overlap (Kumar, Eq. 4.2)'\n"
         << "set xlabel 'message size'\nset ylabel 'overlap %'\n"
         << "set logscale x 2\nset yrange [-5:110]\nset grid\nset key outside right\n"
         << "set format x '%.0b%BB'\n";
  script << "plot ";
  for (std::size_t i = 0; i < keys.size(); ++i)
    script << (i ? ", " : "") << "'-' using 1:2 with linespoints lw 2 title '" << keys[i] << "'";
  script << "\n";
  for (const auto& key : keys) {
    for (const row* r : series[key]) script << r->bytes << ' ' << r->chosen.overlap_pct << '\n';
    script << "e\n";
  }
  std::string tmp = path + ".gnuplot";
  {
    std::ofstream out(tmp);
    out << script.str();
    if (!out) throw std::runtime_error(tmp + ": cannot write it");
  }
  std::string command = "gnuplot '" + tmp + "' 2>&1";
  int rc = std::system(command.c_str());
  std::remove(tmp.c_str());
  if (rc != 0)
    throw std::runtime_error("--plot " + path +
                             ": gnuplot failed or is missing (apt-get install gnuplot-nox)");
}

}  // namespace overlap
