// tools/cli/command_line.hpp: the conventions every hytask program's command line follows.
#include "command_line.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace {

using hytask_cli::command_line;
using hytask_cli::usage_error;

// argv for cli.parse from a list of words (the program's name first).
struct args {
  explicit args(std::vector<std::string> words) : text(std::move(words)) {
    text.insert(text.begin(), "prog");
    for (auto& w : text) ptrs.push_back(w.data());
  }
  int argc() { return static_cast<int>(ptrs.size()); }
  char** argv() { return ptrs.data(); }
  std::vector<std::string> text;
  std::vector<char*> ptrs;
};

struct values {
  long n = 7;
  int nb = 128;
  double dilation = 0;
  std::string csv;
  bool peak = false;
  bool check = true;
  std::vector<std::string> files;
};

void describe(command_line& cli, values& v) {
  cli.integer("-N,--n", v.n, 1, 1000, "order (default 7)");
  cli.integer("--nb", v.nb, 1, 4096, "block (default 128)");
  cli.number("--dilation", v.dilation, 0, 64, "extra bytes per byte (default 0)");
  cli.text("--csv", v.csv, "also write CSV", "PATH");
  cli.flag("--peak", v.peak, "measure the peak");
  cli.flag("--no-check", v.check, "skip the check", false);
}

std::string error_of(std::vector<std::string> words, bool with_files = false) {
  command_line cli("prog", "[options]");
  values v;
  describe(cli, v);
  if (with_files) cli.positionals("files", v.files, "inputs");
  args a(std::move(words));
  try {
    cli.parse(a.argc(), a.argv());
  } catch (const usage_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CommandLine, TakesValuesInBothSpellingsAndKeepsDefaults) {
  command_line cli("prog", "[options]");
  values v;
  describe(cli, v);
  args a({"--nb", "256", "--dilation=1.5", "--csv", "-", "--peak", "--no-check"});
  ASSERT_TRUE(cli.parse(a.argc(), a.argv()));
  EXPECT_EQ(v.n, 7);  // not given: the default stays
  EXPECT_EQ(v.nb, 256);
  EXPECT_DOUBLE_EQ(v.dilation, 1.5);
  EXPECT_EQ(v.csv, "-");
  EXPECT_TRUE(v.peak);
  EXPECT_FALSE(v.check);
}

TEST(CommandLine, LaterOptionWins) {
  command_line cli("prog", "[options]");
  values v;
  describe(cli, v);
  args a({"-N", "3", "--n", "9"});
  ASSERT_TRUE(cli.parse(a.argc(), a.argv()));
  EXPECT_EQ(v.n, 9);
}

TEST(CommandLine, OutOfRangeAndNonNumbersNameTheOptionAndTheRange) {
  EXPECT_EQ(error_of({"-N", "0"}), "-N: '0' is not an integer in 1..1000");
  EXPECT_EQ(error_of({"--nb", "12x"}), "--nb: '12x' is not an integer in 1..4096");
  EXPECT_EQ(error_of({"--dilation", "65"}), "--dilation: '65' is not a number in 0..64");
  EXPECT_EQ(error_of({"--dilation", "nan"}), "--dilation: 'nan' is not a number in 0..64");
}

TEST(CommandLine, UnknownOptionsAndMissingValuesAreNamed) {
  EXPECT_EQ(error_of({"--iterations", "3"}), "unknown option '--iterations'");
  EXPECT_EQ(error_of({"stray"}), "unexpected argument 'stray'");
  EXPECT_EQ(error_of({"--nb"}), "--nb needs a value");
}

TEST(CommandLine, PositionalsAreCollected) {
  command_line cli("prog", "[options] FILE...");
  values v;
  describe(cli, v);
  cli.positionals("files", v.files, "inputs");
  args a({"a.json", "--peak", "b.json"});
  ASSERT_TRUE(cli.parse(a.argc(), a.argv()));
  EXPECT_EQ(v.files, (std::vector<std::string>{"a.json", "b.json"}));
  EXPECT_TRUE(v.peak);
}

TEST(CommandLine, HelpIsPrintedAndAsksNotToRun) {
  command_line cli("prog", "[options]   (under mpiexec)", "What prog does.");
  values v;
  describe(cli, v);
  cli.footer("Exit status: 0, or 2 on a usage error.");
  args a({"--help"});
  testing::internal::CaptureStdout();
  const bool run = cli.parse(a.argc(), a.argv());
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_FALSE(run);
  EXPECT_EQ(out.rfind("usage: prog [options]   (under mpiexec)\n", 0), 0u) << out;
  for (const char* part : {"What prog does.", "-N,--n INT", "order (default 7)", "--no-check", "Exit status"})
    EXPECT_NE(out.find(part), std::string::npos) << part << " missing from\n" << out;
}

TEST(CommandLine, MainFrameMapsErrorsToStatuses) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(hytask_cli::main_frame("prog", [] { return 0; }), 0);
  EXPECT_EQ(hytask_cli::main_frame("prog", []() -> int { throw usage_error("-N: bad"); }), 2);
  EXPECT_EQ(hytask_cli::main_frame("prog", []() -> int { throw std::runtime_error("disk full"); }), 1);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("prog: -N: bad\nrun 'prog --help' for the options\n"), std::string::npos) << err;
  EXPECT_NE(err.find("prog: disk full\n"), std::string::npos) << err;
}

TEST(CommandLine, SplitKeepsEmptyItems) {
  EXPECT_EQ(hytask_cli::split("a,,b,", ','), (std::vector<std::string>{"a", "", "b", ""}));
  EXPECT_TRUE(hytask_cli::split("", ',').empty());
}

}  // namespace

namespace {

TEST(CommandLine, OnlyTheLaunchersFirstProcessSpeaks) {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MPI_LOCALRANKID"}) unsetenv(v);
  EXPECT_TRUE(hytask_cli::launcher_rank_zero()) << "outside a launcher the program speaks";
  setenv("PMI_RANK", "1", 1);
  EXPECT_FALSE(hytask_cli::launcher_rank_zero());
  testing::internal::CaptureStderr();
  const auto quiet = hytask_cli::parse_before_mpi("prog", [](bool) -> bool { throw usage_error("bad"); });
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "rank 1 printed the usage error";
  EXPECT_EQ(quiet, std::optional<int>(2));
  setenv("PMI_RANK", "0", 1);
  EXPECT_TRUE(hytask_cli::launcher_rank_zero());
  EXPECT_EQ(hytask_cli::parse_before_mpi("prog", [](bool) { return true; }), std::nullopt);
  unsetenv("PMI_RANK");
}

}  // namespace
