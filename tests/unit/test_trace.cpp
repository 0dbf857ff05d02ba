#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "hytask/hytask.hpp"

namespace fs = std::filesystem;

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
    hytask::spawn({.name = "waiter"}, [&e] { e.wait(); });
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
  // The waiter either found the event set or suspended and resumed.
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

TEST(Trace, OffWritesNothing) {
  fs::path path = temp_trace("off");
  fs::remove(path);
  {
    hytask::runtime rt(hytask::config{.threads = 1});
    hytask::spawn([] {});
    hytask::wait_all();
  }
  EXPECT_FALSE(fs::exists(path));
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
