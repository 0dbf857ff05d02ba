#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "hytask/hytask.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

fs::path temp_trace(const char* name) {
  return fs::temp_directory_path() / (std::string("hytask_test_") + name + "_" +
                                      std::to_string(::getpid()) + ".json");
}

}  // namespace

TEST(Trace, WritesValidChromeTraceJson) {
  fs::path path = temp_trace("valid");
  {
    hytask::runtime rt(hytask::config{.threads = 2, .trace = path.string()});
    hytask::event e;
    std::atomic<bool> waiting{false};
    hytask::spawn({.name = "waiter"}, [&] {
      waiting.store(true);
      e.wait();
    });
    // Main stays out of the runtime until the waiter runs (on worker 1) and has had ample
    // time to suspend in e.wait(); only then is the setter spawned, so the waiter suspends.
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!waiting.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(1ms);
    const bool started = waiting.load();
    if (!started) e.set();  // lets the runtime's end return; the check below fails
    ASSERT_TRUE(started) << "worker 1 did not start the waiter within 10 s";
    std::this_thread::sleep_for(50ms);
    hytask::spawn({.name = "setter \"quoted\""}, [&e] { e.set(); });
    for (int i = 0; i < 100; ++i) hytask::spawn({.name = "compute"}, [] {});
    hytask::wait_all();
  }
  std::ifstream f(path);
  ASSERT_TRUE(f.good());
  nlohmann::json j = nlohmann::json::parse(f);  // throws on invalid JSON
  ASSERT_TRUE(j.contains("traceEvents"));
  ASSERT_TRUE(j["traceEvents"].is_array());
  std::set<std::string> names, thread_names;
  int slices = 0, suspends = 0, resumes = 0;
  for (const auto& ev : j["traceEvents"]) {
    ASSERT_TRUE(ev.contains("ph"));
    ASSERT_TRUE(ev.contains("pid"));
    ASSERT_TRUE(ev.contains("name"));
    std::string ph = ev["ph"];
    if (ph == "M") {
      if (ev["name"] == "thread_name") thread_names.insert(ev["args"]["name"].get<std::string>());
      continue;
    }
    ASSERT_TRUE(ev.contains("ts"));
    ASSERT_TRUE(ev.contains("tid"));
    ASSERT_TRUE(ev["ts"].is_number());
    if (ph == "X") {
      ASSERT_TRUE(ev["dur"].is_number());
      ASSERT_GE(ev["dur"].get<double>(), 0.0);
      ++slices;
      names.insert(ev["name"].get<std::string>());
    } else if (ph == "i") {
      if (ev["name"] == "suspend") ++suspends;
      if (ev["name"] == "resume") ++resumes;
    }
  }
  EXPECT_TRUE(names.count("waiter"));
  EXPECT_TRUE(names.count("setter \"quoted\""));
  EXPECT_TRUE(names.count("compute"));
  EXPECT_GE(slices, 102);
  EXPECT_TRUE(thread_names.count("worker 0 (main)"));
  EXPECT_TRUE(thread_names.count("worker 1"));
  // The waiter suspended (the setter was spawned after it waited) and resumed.
  EXPECT_GE(suspends, 1) << "no suspend event for the waiter";
  EXPECT_EQ(suspends, resumes);
  fs::remove(path);
}

TEST(Trace, SmallBufferFlushesEverything) {
  fs::path path = temp_trace("flush");
  const int n = 20000;
  {
    hytask::runtime rt(hytask::config{.threads = 2, .trace = path.string(), .trace_buffer = 1024});
    for (int i = 0; i < n; ++i) hytask::spawn({.name = "t"}, [] {});
    hytask::wait_all();
  }
  std::ifstream f(path);
  nlohmann::json j = nlohmann::json::parse(f);
  int slices = 0;
  for (const auto& ev : j["traceEvents"])
    if (ev["ph"] == "X" && ev["name"] == "t") ++slices;
  EXPECT_EQ(slices, n);
  fs::remove(path);
}

// HYTASK_TRACE names the file; config::trace = "" is an explicit off, which wins over the
// environment (src/config.cpp: an explicit field is applied before the variable is read).
// Then the same variable without the override must write that very file, so that the check
// looks where a trace would go.
TEST(Trace, OffWritesNothing) {
  fs::path path = temp_trace("off");
  fs::remove(path);
  hytask_test::env_guard env("HYTASK_TRACE", path.string().c_str());
  {
    hytask::runtime rt(hytask::config{.threads = 1, .trace = ""});
    EXPECT_TRUE(rt.settings().trace.empty()) << rt.settings().trace;
    hytask::spawn({.name = "untraced"}, [] {});
    hytask::wait_all();
  }
  EXPECT_FALSE(fs::exists(path)) << "config::trace = \"\" did not turn off HYTASK_TRACE";
  fs::remove(path);
  {
    hytask::runtime rt(hytask::config{.threads = 1});  // no override: the variable counts
    hytask::spawn({.name = "traced"}, [] {});
    hytask::wait_all();
  }
  ASSERT_TRUE(fs::exists(path)) << "HYTASK_TRACE=" << path << " wrote no trace there";
  std::ifstream f(path);
  nlohmann::json j = nlohmann::json::parse(f);
  int traced = 0, untraced = 0;
  for (const auto& ev : j["traceEvents"])
    if (ev["ph"] == "X") {
      traced += ev["name"] == "traced";
      untraced += ev["name"] == "untraced";
    }
  EXPECT_EQ(traced, 1);
  EXPECT_EQ(untraced, 0);
  fs::remove(path);
}

TEST(Trace, UnwritablePathFailsAtStart) {
  try {
    hytask::runtime rt(hytask::config{.trace = "/nonexistent-dir/trace.json"});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("HYTASK_TRACE"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(hytask::runtime::active());
}
