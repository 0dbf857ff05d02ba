// The model's equations (model.hpp), the paper's worked example among them, and the trace
// reader (trace_phases.hpp) on small hand-written traces.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "model.hpp"
#include "trace_phases.hpp"

namespace {

using namespace hytask::model;

// Rabenseifner and Wellein's example (section 7.2.1): m = 1, n = 8, f_non = 0.2.
TEST(ModelEquations, WorkedExample) {
  EXPECT_NEAR(epsilon_max(0.2, 8, 1), 1.875 / 1.175, 1e-12);
  EXPECT_NEAR(epsilon_max(0.2, 8, 1), 1.60, 0.005);
  EXPECT_NEAR(f_comm_best(0.2, 8, 1), 0.8 / 1.875, 1e-12);
  EXPECT_NEAR(f_comm_best(0.2, 8, 1), 0.427, 0.0005);
  EXPECT_NEAR(f_comm_equiv(0.2, 8, 1), 0.10, 1e-12);
  EXPECT_NEAR(epsilon_min(0.2, 8, 1), 0.875 / 0.975, 1e-12);
  EXPECT_NEAR(epsilon_min(0.2, 8, 1), 0.897, 0.0005);
  EXPECT_NEAR(epsilon_bound(8, 1), 2.0 - 1.0 / 8, 1e-12);
}

// The closed forms agree with eq. (3) at their points.
TEST(ModelEquations, ClosedFormsMatchEquation3) {
  const double f_non = 0.2;
  const double best = f_comm_best(f_non, 8, 1);
  EXPECT_NEAR(epsilon({.comm = best, .non = f_non, .overlap = 1 - f_non - best}, 8, 1), epsilon_max(f_non, 8, 1), 1e-12);
  const double equiv = f_comm_equiv(f_non, 8, 1);
  EXPECT_NEAR(epsilon({.comm = equiv, .non = f_non, .overlap = 1 - f_non - equiv}, 8, 1), 1.0, 1e-12);
  EXPECT_NEAR(epsilon({.comm = 0, .non = f_non, .overlap = 1 - f_non}, 8, 1), epsilon_min(f_non, 8, 1), 1e-12);
  // Eq. (8) is eq. (3)'s compute-bound branch.
  const fractions low{.comm = 0.05, .non = 0.2, .overlap = 0.75};
  EXPECT_NEAR(epsilon_compute_bound(low, 8, 1), epsilon(low, 8, 1), 1e-12);
  // m = 2 at the same point: eq. (5)'s general form.
  const double best2 = f_comm_best(f_non, 8, 2);
  EXPECT_NEAR(epsilon({.comm = best2, .non = f_non, .overlap = 1 - f_non - best2}, 8, 2), epsilon_max(f_non, 8, 2), 1e-12);
}

TEST(ModelEquations, Equation3ByHand) {
  // f_comm 0.3, f_non 0.1, f_ov 0.6, n = 4: m = 1 max(0.3, 0.8) -> 1/0.9; m = 2 max(0.15, 1.2) -> 1/1.3.
  const fractions f{.comm = 0.3, .non = 0.1, .overlap = 0.6};
  EXPECT_NEAR(epsilon(f, 4, 1), 1 / 0.9, 1e-12);
  EXPECT_NEAR(epsilon(f, 4, 2), 1 / 1.3, 1e-12);
  EXPECT_EQ(best_m(f, 4), 1);
  // Communication-bound: f_comm 0.8, f_non 0.1, f_ov 0.1, n = 8: m = 4 max(0.2, 0.2) is the best.
  const fractions c{.comm = 0.8, .non = 0.1, .overlap = 0.1};
  EXPECT_EQ(best_m(c, 8), 4);
  EXPECT_NEAR(epsilon(c, 8, 4), 1 / 0.3, 1e-12);
}

TEST(ModelEquations, TasksAndIdeal) {
  const fractions f{.comm = 0.31, .non = 0.1, .overlap = 0.59};
  // n = 2: tasks max(0.31, 0.31/2 + 0.59) = 0.745; ideal max(0.31, 0.59) = 0.59.
  EXPECT_NEAR(epsilon_tasks(f, 2, 1), 1 / (0.1 + 0.745), 1e-12);
  EXPECT_NEAR(epsilon_ideal(f), 1 / 0.69, 1e-12);
  for (int n = 2; n <= 16; ++n) {
    EXPECT_GE(epsilon_tasks(f, n, 1), epsilon(f, n, 1));
    EXPECT_GE(epsilon_tasks(f, n, 1), 1.0);
    EXPECT_LE(epsilon_tasks(f, n, 1), epsilon_ideal(f) + 1e-12);
  }
}

TEST(ModelEquations, RejectsBadArguments) {
  const fractions ok{.comm = 0.3, .non = 0.2, .overlap = 0.5};
  EXPECT_THROW(epsilon(ok, 1, 1), std::invalid_argument);
  EXPECT_THROW(epsilon(ok, 4, 0), std::invalid_argument);
  EXPECT_THROW(epsilon(ok, 4, 4), std::invalid_argument);
  EXPECT_THROW(epsilon({.comm = 0.3, .non = 0.2, .overlap = 0.6}, 4, 1), std::invalid_argument);
  EXPECT_THROW(epsilon({.comm = -0.1, .non = 0.6, .overlap = 0.5}, 4, 1), std::invalid_argument);
  EXPECT_THROW(epsilon_max(1.5, 8, 1), std::invalid_argument);
  try {
    epsilon(ok, 4, 4);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("m = 4"), std::string::npos) << e.what();
  }
}

// ---- the trace reader -------------------------------------------------------------------

class TraceFile : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::temp_directory_path() / ("hytask_model_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
  }
  void TearDown() override {
    std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                ("hytask_model_test_" + std::to_string(::getpid())));
  }
};

std::string ev(const std::string& name, const std::string& cat, const char* ph, double ts, double dur, int tid, int id) {
  char b[256];
  if (std::string(ph) == "X")
    std::snprintf(b, sizeof b, R"({"name":"%s","cat":"%s","ph":"X","ts":%.3f,"dur":%.3f,"pid":0,"tid":%d,"args":{"id":%d}})",
                  name.c_str(), cat.c_str(), ts, dur, tid, id);
  else
    std::snprintf(b, sizeof b, R"({"name":"%s","cat":"%s","ph":"i","s":"t","ts":%.3f,"pid":0,"tid":%d,"args":{"id":%d}})",
                  name.c_str(), cat.c_str(), ts, tid, id);
  return b;
}

// Two workers; each iteration of 100 µs: 30 µs of MPI on main, then on both workers 50 µs of
// "overlap:" work and 20 µs of boundary work. Iterations start at 0, 100, 200; the compute
// after 200 ends no iteration. Expected: f_comm 0.3, f_non 0.2, f_ov 0.5.
std::string masteronly_trace() {
  std::string t = R"({"traceEvents":[{"name":"process_name","ph":"M","pid":0,"args":{"name":"rank 0"}})";
  t += R"j(,{"name":"thread_name","ph":"M","pid":0,"tid":0,"args":{"name":"worker 0 (main)"}})j";
  t += R"(,{"name":"thread_name","ph":"M","pid":0,"tid":1,"args":{"name":"worker 1"}})";
  int id = 1;
  for (int k = 0; k < 3; ++k) {
    const double s = 100.0 * k;
    t += "," + ev("MPI_Irecv", "mpi", "i", s, 0, 0, 0);
    t += "," + ev("MPI_Isend", "mpi", "i", s + 1, 0, 0, 0);
    t += "," + ev("complete", "mpi", "i", s + 29, 0, 0, 0);
    for (int w = 0; w < 2; ++w) {
      t += "," + ev("overlap:inner", "task", "X", s + 30, 50, w, id++);
      t += "," + ev("boundary", "task", "X", s + 80, 20, w, id++);
    }
  }
  return t + "]}";
}

TEST_F(TraceFile, MasteronlyFractions) {
  const rank_phases r = read_rank(write("run.rank0.json", masteronly_trace()));
  EXPECT_EQ(r.rank, 0);
  EXPECT_EQ(r.workers, 2);
  EXPECT_EQ(r.posts, 6u);
  EXPECT_EQ(r.tasks_during_comm, 0u);
  ASSERT_EQ(r.iterations.size(), 2u);
  for (const iteration& i : r.iterations) {
    EXPECT_NEAR(i.seconds, 100e-6, 1e-12);
    EXPECT_NEAR(i.comm, 0.3, 1e-9);
    EXPECT_NEAR(i.non, 0.2, 1e-9);
    EXPECT_NEAR(i.overlap, 0.5, 1e-9);
  }
  const totals t = sum_iterations(r.iterations);
  EXPECT_NEAR(t.comm + t.non + t.overlap, 1.0, 1e-12);
}

// A task that posts MPI is communication, not compute, and a compute task running across a
// post is counted.
TEST_F(TraceFile, PostingTaskIsCommunication) {
  std::string t = R"({"traceEvents":[)";
  t += ev("exchange", "task", "X", 0, 40, 0, 7) + "," + ev("MPI_Isend", "mpi", "i", 1, 0, 0, 7);
  t += "," + ev("overlap:a", "task", "X", 40, 50, 1, 8);
  t += "," + ev("exchange", "task", "X", 100, 40, 0, 9) + "," + ev("MPI_Isend", "mpi", "i", 101, 0, 0, 9);
  t += "," + ev("b", "task", "X", 95, 10, 1, 10);  // spans the post at 101
  t += "]}";
  const rank_phases r = read_rank(write("x.json", t));
  EXPECT_EQ(r.comm_slices, 2u);
  EXPECT_EQ(r.tasks_during_comm, 1u);
  ASSERT_EQ(r.iterations.size(), 1u);
  // [1, 101): compute covers [40, 90) and [95, 101), the exchange task's 40 µs are not compute.
  EXPECT_NEAR(r.iterations[0].comm, 0.44, 1e-9);
  EXPECT_NEAR(r.iterations[0].overlap, 0.5, 1e-9);
  EXPECT_NEAR(r.iterations[0].non, 0.06, 1e-9);
}

TEST_F(TraceFile, ErrorsNameTheFileAndTheProblem) {
  const std::string bad = write("bad.json", R"({"traceEvents":[{"name":"x")");
  try {
    read_rank(bad);
    FAIL() << "accepted malformed JSON";
  } catch (const trace_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  }
  const std::string quiet = write("quiet.json", "{\"traceEvents\":[" + ev("t", "task", "X", 0, 5, 0, 1) + "]}");
  try {
    read_rank(quiet);
    FAIL() << "accepted a trace without MPI";
  } catch (const trace_error& e) {
    EXPECT_NE(std::string(e.what()).find("no MPI post"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_rank(write("obj.json", R"({"other":1})")), trace_error);
  EXPECT_THROW(read_rank("/nonexistent/run.rank0.json"), trace_error);
}

TEST_F(TraceFile, RankFilesFollowHytaskTraceNames) {
  const std::string r0 = write("job.rank0.json", masteronly_trace());
  const std::string r1 = write("job.rank1.json", masteronly_trace());
  const std::string base = r0.substr(0, r0.size() - std::string("job.rank0.json").size()) + "job.json";
  const auto files = rank_files(base);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0], r0);
  EXPECT_EQ(files[1], r1);
  EXPECT_THROW(rank_files(base + ".missing"), trace_error);
}

}  // namespace
