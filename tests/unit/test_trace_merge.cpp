// The pieces of the job's trace that need no MPI: the clock offset from ping-pongs, reading
// an event line back, and the merge of the ranks' files (drift, pairing of messages).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trace/clock_sync.hpp"
#include "trace/event_line.hpp"
#include "trace/merge.hpp"

namespace fs = std::filesystem;
namespace tr = hytask::trace;

TEST(ClockSync, TakesTheShortestRoundTripAndItsMidpoint) {
  // The reference clock runs 5 ms ahead; each ping-pong's two legs take different times.
  const std::int64_t offset = 5'000'000;
  std::vector<tr::clock_sample> samples;
  const std::int64_t legs[][2] = {{9000, 1000}, {400, 600}, {3000, 3000}, {100, 20000}};
  std::int64_t t = 1'000'000;
  for (const auto& l : legs) {
    samples.push_back({t, t + l[0] + offset, t + l[0] + l[1]});
    t += 100'000;
  }
  const tr::clock_estimate e = tr::estimate_offset(samples);
  EXPECT_EQ(e.rtt_ns, 1000);  // the second sample
  // Off by half the difference of its legs: (400 - 600) / 2.
  EXPECT_EQ(e.offset_ns, offset - 100);
  EXPECT_LE(std::llabs(e.offset_ns - offset), e.rtt_ns / 2);
  EXPECT_EQ(tr::estimate_offset({}).rtt_ns, 0);
}

TEST(ClockSync, DriftIsSpreadOverTheRun) {
  const tr::clock_drift d{.measured = true, .drift_ns = 1000, .at_ns = 1'000'000};
  EXPECT_DOUBLE_EQ(tr::corrected_ns(0, d), 0);
  EXPECT_DOUBLE_EQ(tr::corrected_ns(500'000, d), 500'500);
  EXPECT_DOUBLE_EQ(tr::corrected_ns(1'000'000, d), 1'001'000);
  EXPECT_DOUBLE_EQ(tr::corrected_ns(500'000, tr::clock_drift{}), 500'000);
}

TEST(EventLine, ReadsAndRewritesOneEvent) {
  tr::event e;
  ASSERT_TRUE(tr::parse_event(
      R"({"name":"a \"b\", c","cat":"task","ph":"X","ts":12.345,"dur":0.5,"pid":0,"tid":3,"args":{"id":7,"event":"end"}},)",
      e));
  EXPECT_EQ(e.text("name"), "a \"b\", c");
  EXPECT_EQ(e.ts_ns(), 12345);
  EXPECT_EQ(e.dur_ns(), 500);
  EXPECT_EQ(e.arg_int("id"), 7);
  EXPECT_EQ(e.arg_text("event"), "end");
  e.set_field("ts", tr::format_us(99001));
  const auto j = nlohmann::json::parse(e.to_json());
  EXPECT_DOUBLE_EQ(j["ts"].get<double>(), 99.001);
  EXPECT_EQ(j["name"], "a \"b\", c");
  EXPECT_FALSE(tr::parse_event(R"({"displayTimeUnit":"ns","traceEvents":[)", e));
  EXPECT_FALSE(tr::parse_event("]}", e));
}

namespace {

fs::path merge_temp(const std::string& name) {
  return fs::temp_directory_path() / ("hytask_test_merge_" + std::to_string(::getpid()) + "_" + name);
}

void write_rank_file(const fs::path& p, int rank, const std::vector<std::string>& events, const std::string& end = "") {
  std::ofstream f(p);
  f << R"({"displayTimeUnit":"ns","otherData":{"producer":"hytask","rank":)" << rank
    << R"(,"origin_ns":1000,"clock":"aligned"},"traceEvents":[)" << "\n";
  f << R"({"name":"process_name","ph":"M","pid":)" << rank << R"(,"tid":0,"args":{"name":"hytask rank )" << rank << "\"}}";
  for (const auto& e : events) f << ",\n" << e;
  f << "\n]" << end << "}\n";
}

}  // namespace

TEST(TraceMerge, OneProcessPerRankFlowsAndDrift) {
  const fs::path r0 = merge_temp("r0.json"), r1 = merge_temp("r1.json"), out = merge_temp("job.json");
  // Rank 0 sends two messages of one stream to rank 1, and one that rank 1 did not trace.
  write_rank_file(r0, 0,
        {R"({"name":"t","cat":"task","ph":"X","ts":1.000,"dur":10.000,"pid":0,"tid":0,"args":{"id":1,"event":"end"}})",
         R"({"name":"MPI_Isend","cat":"mpi","ph":"i","s":"t","ts":2.000,"pid":0,"tid":0,"args":{"id":1,"peer":1,"bytes":8,"comm":5,"src":0,"dst":1,"tag":3,"send_seq":0}})",
         R"({"name":"MPI_Isend","cat":"mpi","ph":"i","s":"t","ts":3.000,"pid":0,"tid":0,"args":{"id":1,"peer":1,"bytes":8,"comm":5,"src":0,"dst":1,"tag":3,"send_seq":1}})",
         R"({"name":"MPI_Isend","cat":"mpi","ph":"i","s":"t","ts":4.000,"pid":0,"tid":0,"args":{"id":1,"peer":1,"bytes":8,"comm":5,"src":0,"dst":1,"tag":9,"send_seq":0}})"});
  // Rank 1's clock drifted 1 us by 100 us: its times grow by 1 %.
  write_rank_file(r1, 1,
        {R"({"name":"complete","cat":"mpi","ph":"i","s":"t","ts":50.000,"pid":1,"tid":2,"args":{"id":4,"peer":0,"after_ns":9,"bytes":8,"comm":5,"src":0,"dst":1,"tag":3,"recv_seq":1}})",
         R"({"name":"complete","cat":"mpi","ph":"i","s":"t","ts":40.000,"pid":1,"tid":2,"args":{"id":4,"peer":0,"after_ns":9,"bytes":8,"comm":5,"src":0,"dst":1,"tag":3,"recv_seq":0}})"},
        R"(,
"clockEnd":{"drift_ns":1000,"at_ns":100000})");
  const tr::merge_stats s = tr::merge_files({r1.string(), r0.string()}, out.string());
  EXPECT_EQ(s.inputs, 2);
  EXPECT_EQ(s.flows, 2u);
  EXPECT_EQ(s.unmatched_sends, 1u);
  EXPECT_EQ(s.unmatched_receives, 0u);
  std::ifstream f(out);
  const auto j = nlohmann::json::parse(f);
  std::map<std::int64_t, std::vector<nlohmann::json>> flows;
  std::set<int> pids;
  for (const auto& e : j["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    if (e["cat"] == "mpi-flow") flows[e["id"].get<std::int64_t>()].push_back(e);
    if (e["name"] == "complete" && e["args"]["recv_seq"] == 0) {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 40.4);
    }
  }
  EXPECT_EQ(pids, (std::set<int>{0, 1}));
  ASSERT_EQ(flows.size(), 2u);
  for (const auto& [id, ends] : flows) {
    ASSERT_EQ(ends.size(), 2u);
    const auto& s0 = ends[0]["ph"] == "s" ? ends[0] : ends[1];
    const auto& f0 = ends[0]["ph"] == "s" ? ends[1] : ends[0];
    EXPECT_EQ(s0["pid"], 0);
    EXPECT_EQ(f0["pid"], 1);
    EXPECT_EQ(f0["tid"], 2);
    // The n-th send of the stream with the n-th receive, whatever the order in the files.
    const double expected = s0["ts"].get<double>() == 2.0 ? 40.4 : 50.5;
    EXPECT_DOUBLE_EQ(f0["ts"].get<double>(), expected);
  }
  fs::remove(r0);
  fs::remove(r1);
  fs::remove(out);
}

TEST(TraceMerge, RefusesAFileNotWrittenByHytask) {
  const fs::path p = merge_temp("other.json"), out = merge_temp("out.json");
  std::ofstream(p) << "{\"traceEvents\":[\n]}\n";
  EXPECT_THROW(tr::merge_files({p.string()}, out.string()), std::runtime_error);
  fs::remove(p);
  fs::remove(out);
}
