// The library's messages (src/platform/messages.hpp): the one format, the HYTASK_VERBOSE
// filter, once-per-job printing, and the runtime applying the knob.
#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "hytask/hytask.hpp"
#include "platform/messages.hpp"

namespace {

namespace core = hytask::core;
using core::verbosity;

// Restores the verbosity and the rank hook that a test changes.
struct message_state_guard {
  int level = core::verbosity_level();
  ~message_state_guard() {
    core::set_verbosity(level);
    core::set_message_rank_source(nullptr);
  }
};

std::string printed(verbosity v, const std::string& text) {
  ::testing::internal::CaptureStderr();
  core::message(v, text);
  return ::testing::internal::GetCapturedStderr();
}

std::string printed_once_per_job(verbosity v, const std::string& text) {
  ::testing::internal::CaptureStderr();
  core::message_once_per_job(v, text);
  return ::testing::internal::GetCapturedStderr();
}

}  // namespace

TEST(Messages, FormatCarriesTheRankAndTheLevel) {
  EXPECT_EQ(core::format_message(verbosity::warning, 3, "disk full"),
            "hytask[rank 3]: warning: disk full\n");
  EXPECT_EQ(core::format_message(verbosity::error, 0, "x"), "hytask[rank 0]: error: x\n");
  EXPECT_EQ(core::format_message(verbosity::info, 12, "x"), "hytask[rank 12]: info: x\n");
  EXPECT_EQ(core::format_message(verbosity::debug, 1, "x"), "hytask[rank 1]: debug: x\n");
}

TEST(Messages, FormatWithoutARankSaysHytaskOnly) {
  EXPECT_EQ(core::format_message(verbosity::error, -1, "bad value"), "hytask: error: bad value\n");
}

TEST(Messages, FormatDropsARepeatedPrefixAndPrefixesEveryLine) {
  // Exception messages begin with "hytask: ": not said twice.
  EXPECT_EQ(core::format_message(verbosity::error, 2, "hytask: a usage error\n"),
            "hytask[rank 2]: error: a usage error\n");
  EXPECT_EQ(core::format_message(verbosity::warning, 1, "first\n  second\nthird"),
            "hytask[rank 1]: warning: first\nhytask[rank 1]:   second\nhytask[rank 1]: third\n");
  EXPECT_EQ(core::format_message(verbosity::warning, -1, "a\nb"),
            "hytask: warning: a\nhytask: b\n");
}

TEST(Messages, LevelFilter) {
  message_state_guard guard;
  const verbosity all[] = {verbosity::error, verbosity::warning, verbosity::info,
                           verbosity::debug};
  for (int level = 0; level <= 3; ++level) {
    core::set_verbosity(level);
    for (verbosity v : all) {
      const bool expected = v == verbosity::error || static_cast<int>(v) <= level;
      EXPECT_EQ(core::message_enabled(v), expected) << "level " << level << ", message "
                                                     << static_cast<int>(v);
      const std::string out = printed(v, "probe");
      EXPECT_EQ(out.find("probe") != std::string::npos, expected)
          << "level " << level << ", message " << static_cast<int>(v) << ": '" << out << "'";
    }
  }
}

TEST(Messages, DefaultLevelPrintsWarningsButNotInfo) {
  EXPECT_EQ(core::default_verbosity, 1);
  message_state_guard guard;
  core::set_verbosity(core::default_verbosity);
  EXPECT_EQ(printed(verbosity::warning, "w"), "hytask: warning: w\n");
  EXPECT_EQ(printed(verbosity::info, "i"), "");
}

TEST(Messages, RankComesFromTheHook) {
  message_state_guard guard;
  core::set_message_rank_source([]() noexcept { return 5; });
  EXPECT_EQ(core::message_rank(), 5);
  EXPECT_EQ(printed(verbosity::warning, "mine"), "hytask[rank 5]: warning: mine\n");
  core::set_message_rank_source(nullptr);
  EXPECT_EQ(core::message_rank(), -1);
  EXPECT_EQ(printed(verbosity::warning, "mine"), "hytask: warning: mine\n");
}

TEST(Messages, OncePerJobPrintsOnRankZeroOrWithoutARank) {
  message_state_guard guard;
  core::set_message_rank_source([]() noexcept { return 1; });
  EXPECT_EQ(printed_once_per_job(verbosity::warning, "shared"), "");
  core::set_message_rank_source([]() noexcept { return 0; });
  EXPECT_EQ(printed_once_per_job(verbosity::warning, "shared"), "hytask[rank 0]: warning: shared\n");
  core::set_message_rank_source(nullptr);
  EXPECT_EQ(printed_once_per_job(verbosity::warning, "shared"), "hytask: warning: shared\n");
  core::set_verbosity(0);  // still filtered by level
  EXPECT_EQ(printed_once_per_job(verbosity::warning, "shared"), "");
}

TEST(Messages, PrintfVariantsFormatTheirArguments) {
  message_state_guard guard;
  core::set_verbosity(3);
  ::testing::internal::CaptureStderr();
  core::messagef(verbosity::debug, "%d of %s", 7, "them");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "hytask: debug: 7 of them\n");
  const std::string big(3000, 'x');  // longer than the first buffer
  ::testing::internal::CaptureStderr();
  core::messagef(verbosity::info, "%s!", big.c_str());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "hytask: info: " + big + "!\n");
}

// The runtime applies HYTASK_VERBOSE: at 0 the warning that several tasks failed is gone,
// at 1 it is printed.
TEST(Messages, RuntimeAppliesHytaskVerbose) {
  message_state_guard guard;
  for (const char* level : {"0", "1"}) {
    ::setenv("HYTASK_VERBOSE", level, 1);
    std::string err;
    {
      hytask::runtime rt(hytask::config{.threads = 2});
      EXPECT_EQ(core::verbosity_level(), std::atoi(level));
      hytask::spawn([] { throw std::runtime_error("first"); });
      hytask::spawn([] { throw std::runtime_error("second"); });
      ::testing::internal::CaptureStderr();
      EXPECT_THROW(hytask::wait_all(), std::runtime_error);
      err = ::testing::internal::GetCapturedStderr();
    }
    ::unsetenv("HYTASK_VERBOSE");
    const bool warned = err.find("warning: wait_all: 2 tasks failed") != std::string::npos;
    EXPECT_EQ(warned, std::string(level) == "1") << "HYTASK_VERBOSE=" << level << ": '" << err << "'";
  }
}
