// One trace per job: every rank traces (HYTASK_TRACE without %r), rank 0 merges the ranks'
// timelines as MPI finalises, and then reads the merged trace back and checks it against
// what the program did: one process per rank, `tasks` tasks named "work" and `messages`
// sends to the next rank and receives from the previous one on each rank, a flow from each
// send to its receive, and no receive completing before its send was posted (the ranks'
// clocks are aligned on rank 0's). With "otf2" the trace is an OTF2 archive, read back with
// otf2-print; the summary tool's counts are checked too.
//
//   trace_job json <hytask-trace>    trace_job otf2 <hytask-trace> <otf2-print>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace fs = std::filesystem;

namespace {

constexpr int tasks = 12, messages = 6, tag = 7;
int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "trace_job: FAILED: %s\n", what.c_str());
    ++failures;
  }
}

void spin_for(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

std::string run(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    std::array<char, 4096> b;
    while (std::size_t n = std::fread(b.data(), 1, b.size(), p)) out.append(b.data(), n);
    ::pclose(p);
  }
  return out;
}

void check_json(const std::string& path, int size) {
  std::ifstream f(path);
  check(f.good(), "the merged trace " + path + " exists");
  if (!f.good()) return;
  const nlohmann::json j = nlohmann::json::parse(f);
  std::set<int> processes;
  std::map<int, int> work, sends, receives;
  // (cat, comm, src, dst, tag, seq) -> (pid, ts) of each end
  using key = std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t>;
  std::map<key, std::pair<int, double>> send_end, recv_end;
  std::map<std::int64_t, std::vector<const nlohmann::json*>> flows;
  for (const auto& ev : j["traceEvents"]) {
    const std::string ph = ev["ph"], name = ev["name"], cat = ev.value("cat", "");
    const int pid = ev["pid"];
    if (ph == "M" && name == "process_name") processes.insert(pid);
    if (ph == "X" && cat == "task" && name == "work" && ev["args"].value("event", "") == "end") ++work[pid];
    if (cat == "mpi-flow") flows[ev["id"].get<std::int64_t>()].push_back(&ev);
    if (ph != "i" || !ev.contains("args")) continue;
    const auto& a = ev["args"];
    const bool s = a.contains("send_seq"), r = a.contains("recv_seq");
    if (!s && !r) continue;
    auto num = [&](const char* f) { return a[f].get<std::int64_t>(); };
    const key k{cat, num("comm"), num("src"), num("dst"), num("tag"), num(s ? "send_seq" : "recv_seq")};
    (s ? send_end : recv_end)[k] = {pid, ev["ts"].get<double>()};
    check((s ? a["src"] : a["dst"]).get<int>() == pid, "a message end lies on its own rank's process");
    if (cat == "mpi" && num("tag") == tag) ++(s ? sends : receives)[pid];
  }
  check(static_cast<int>(processes.size()) == size,
        "one process per rank: " + std::to_string(processes.size()) + " for " + std::to_string(size) + " ranks");
  for (int r = 0; r < size; ++r) {
    check(processes.count(r) == 1, "a process for rank " + std::to_string(r));
    check(work[r] == tasks, "rank " + std::to_string(r) + " ran " + std::to_string(work[r]) + " 'work' tasks, " +
                                std::to_string(tasks) + " expected");
    check(sends[r] == messages, "rank " + std::to_string(r) + " posted " + std::to_string(sends[r]) + " sends");
    check(receives[r] == messages, "rank " + std::to_string(r) + " completed " + std::to_string(receives[r]) + " receives");
  }
  // Every traced send paired with its receive, each pair one flow, causality on the merged clock.
  std::set<std::tuple<int, double, int, double>> pairs;
  int program_pairs = 0;
  for (const auto& [k, s] : send_end) {
    auto it = recv_end.find(k);
    check(it != recv_end.end(), "a receive for every traced send");
    if (it == recv_end.end()) continue;
    const auto& [spid, sts] = s;
    const auto& [rpid, rts] = it->second;
    pairs.insert({spid, sts, rpid, rts});
    if (std::get<0>(k) == "mpi" && std::get<4>(k) == tag) {
      ++program_pairs;
      check(spid == (rpid + size - 1) % size, "a ring message goes from the previous rank");
    }
    check(rts >= sts, "causality: the receive of a message from rank " + std::to_string(spid) + " to rank " +
                          std::to_string(rpid) + " (category " + std::get<0>(k) + ", tag " +
                          std::to_string(std::get<4>(k)) + ", number " + std::to_string(std::get<5>(k)) +
                          ") completed at " + std::to_string(rts) + " us, before its send was posted at " +
                          std::to_string(sts) + " us");
  }
  check(recv_end.size() == send_end.size(), "as many traced receives as sends");
  check(program_pairs == size * messages, "the ring's messages paired: " + std::to_string(program_pairs));
  std::set<std::tuple<int, double, int, double>> flow_pairs;
  for (const auto& [id, evs] : flows) {
    check(evs.size() == 2, "a flow has a start and an end");
    if (evs.size() != 2) continue;
    const auto* s = (*evs[0])["ph"] == "s" ? evs[0] : evs[1];
    const auto* e = s == evs[0] ? evs[1] : evs[0];
    check((*s)["ph"] == "s" && (*e)["ph"] == "f", "a flow's phases are s and f");
    flow_pairs.insert({(*s)["pid"].get<int>(), (*s)["ts"].get<double>(), (*e)["pid"].get<int>(),
                       (*e)["ts"].get<double>()});
  }
  check(flow_pairs == pairs, "the flows are exactly the paired messages: " + std::to_string(flow_pairs.size()) +
                                 " flows, " + std::to_string(pairs.size()) + " pairs");
}

void check_summary(const std::string& tool, const std::string& path, int size) {
  const std::string out = run(tool + " summary " + path);
  for (int r = 0; r < size; ++r) {
    const std::string rank = "rank " + std::to_string(r) + ":";
    const auto at = out.find(rank);
    check(at != std::string::npos, "the summary has " + rank + "\n" + out);
    if (at == std::string::npos) continue;
    const auto next = out.find("\nrank ", at);
    const std::string part = out.substr(at, next == std::string::npos ? std::string::npos : next - at);
    check(part.find("task \"work\": " + std::to_string(tasks) + " runs") != std::string::npos,
          "the summary counts " + std::to_string(tasks) + " runs of 'work' on " + rank + "\n" + part);
    std::smatch m;
    const bool got = std::regex_search(part, m, std::regex("sends ([0-9]+), receives ([0-9]+)"));
    check(got && std::stoi(m[1]) == messages && std::stoi(m[2]) == messages,
          "the summary counts the ring's " + std::to_string(messages) + " sends and receives on " + rank + "\n" + part);
    check(std::regex_search(part, m, std::regex("busy ([0-9.]+) ms")) && std::stod(m[1]) >= tasks * 0.2 * 0.99,
          "the summary's busy time covers the tasks' 200 us each on " + rank + "\n" + part);
  }
}

void check_otf2(const std::string& otf2_print, const std::string& path, int size) {
  check(fs::exists(path), "the OTF2 anchor " + path + " exists");
  const std::string out = run(otf2_print + " " + path + " 2>&1");
  std::istringstream in(out);
  std::string line;
  int enter_work = 0, leave_work = 0, mpi_send = 0, mpi_recv = 0;
  while (std::getline(in, line)) {
    if (line.rfind("ENTER", 0) == 0 && line.find("\"work\"") != std::string::npos) ++enter_work;
    if (line.rfind("LEAVE", 0) == 0 && line.find("\"work\"") != std::string::npos) ++leave_work;
    if (line.rfind("MPI_SEND", 0) == 0 && line.find("Tag: " + std::to_string(tag) + ",") != std::string::npos) ++mpi_send;
    if (line.rfind("MPI_RECV", 0) == 0 && line.find("Tag: " + std::to_string(tag) + ",") != std::string::npos) ++mpi_recv;
  }
  // A task that suspends is entered once per stretch; these do not suspend.
  check(enter_work == size * tasks && leave_work == size * tasks,
        "otf2-print shows " + std::to_string(enter_work) + " enters and " + std::to_string(leave_work) +
            " leaves of 'work', " + std::to_string(size * tasks) + " expected\n" + out.substr(0, 2000));
  check(mpi_send == size * messages && mpi_recv == size * messages,
        "otf2-print shows " + std::to_string(mpi_send) + " MPI_SEND and " + std::to_string(mpi_recv) +
            " MPI_RECV of the ring, " + std::to_string(size * messages) + " expected");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "json";
  const std::string tool = argc > 2 ? argv[2] : "";
  const std::string otf2_print = argc > 3 ? argv[3] : "otf2-print";
  const char* dir_env = std::getenv("HYTASK_TEST_TRACE_DIR");
  const fs::path dir = dir_env ? fs::path(dir_env) : fs::temp_directory_path();
  const std::string base = (dir / ("hytask_trace_job_" + std::to_string(::getppid()))).string();
  const std::string path = base + (mode == "otf2" ? ".otf2" : ".json");
  int rank = -1, size = 0;
  {
    hytask::runtime rt(hytask::config{.trace = path});
    rank = hytask::mpi::rank();
    size = hytask::mpi::size();
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < tasks; ++i) hytask::spawn({.name = "work"}, [] { spin_for(std::chrono::microseconds(200)); });
    std::vector<double> out(8, rank), in(8 * messages, -1);
    hytask::spawn({.name = "sender"}, [&] {
      for (int i = 0; i < messages; ++i) hytask::mpi::send(std::span(out), next, tag);
    });
    hytask::spawn({.name = "receiver"}, [&] {
      for (int i = 0; i < messages; ++i) hytask::mpi::recv(std::span(in).subspan(8 * i, 8), prev, tag);
    });
    hytask::wait_all();
    check(in[0] == prev && in[8 * messages - 1] == prev, "the ring's data arrived");
  }
  if (rank != 0) return failures == 0 ? 0 : 1;
  if (mode == "otf2") {
    check_otf2(otf2_print, path, size);
    for (int r = 0; r < size; ++r)
      check(!fs::exists(base + ".rank" + std::to_string(r) + ".json"), "the ranks' JSON files are removed once merged");
    fs::remove_all(base);
    fs::remove(base + ".def");
    fs::remove(path);
  } else {
    check_json(path, size);
    if (!tool.empty()) check_summary(tool, path, size);
    // The ranks' own files stay (each rank's timeline, on the aligned clock), and the tool
    // merges them into the same trace.
    std::string files;
    for (int r = 0; r < size; ++r) files += " " + base + ".rank" + std::to_string(r) + ".json";
    const std::string merged_by_tool = base + ".tool.json";
    const std::string said = run(tool + " merge" + files + " -o " + merged_by_tool);
    check(said.find(std::to_string(size) + " ranks") != std::string::npos,
          "hytask-trace merge reports the ranks: " + said);
    check_json(merged_by_tool, size);
    fs::remove(merged_by_tool);
    for (int r = 0; r < size; ++r) {
      const std::string mine = base + ".rank" + std::to_string(r) + ".json";
      if (failures != 0) {  // each rank's clock offset and the round trip it came from
        std::ifstream in(mine);
        std::string first;
        std::getline(in, first);
        std::fprintf(stderr, "trace_job: %s\n", first.c_str());
      }
      check(fs::exists(mine), "rank " + std::to_string(r) + "'s own trace " + mine + " is kept");
      fs::remove(mine);
    }
    fs::remove(path);
  }
  if (failures == 0) std::printf("trace_job %s: ok\n", mode.c_str());
  return failures == 0 ? 0 : 1;
}
