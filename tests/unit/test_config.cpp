#include <gtest/gtest.h>

#include <sched.h>

#include <cstdlib>
#include <string>

#include "hytask/hytask.hpp"

namespace {

struct env_guard {
  explicit env_guard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value, 1);
  }
  ~env_guard() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
    else ::unsetenv(name_);
  }
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// Unsets a variable for a scope (restoring it after).
struct env_unset {
  explicit env_unset(const char* name) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::unsetenv(name);
  }
  ~env_unset() {
    if (had_) ::setenv(name_, old_.c_str(), 1);
  }
  const char* name_;
  std::string old_;
  bool had_ = false;
};

std::string source_of(const std::string& variable) {
  for (const auto& k : hytask::describe_knobs())
    if (k.variable == variable) return k.source;
  return "";
}

std::string error_of(const hytask::config& c = {}) {
  try {
    (void)hytask::settings::resolve(c);
  } catch (const hytask::config_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Config, DefaultsAreSane) {
  auto s = hytask::settings::resolve();
  EXPECT_GE(s.threads, 1u);
  EXPECT_GE(s.max_tasks, 16u);
  EXPECT_GE(s.stack_size, 16u * 1024);
  EXPECT_TRUE(s.trace.empty());
}

TEST(Config, EnvironmentOverridesDefault) {
  env_guard a("HYTASK_THREADS", "3"), b("HYTASK_STACK_SIZE", "1M"), c("HYTASK_PIN", "cores");
  auto s = hytask::settings::resolve();
  EXPECT_EQ(s.threads, 3u);
  EXPECT_EQ(s.stack_size, 1024u * 1024);
  EXPECT_EQ(s.pin, hytask::pin_policy::cores);
}

TEST(Config, ExplicitFieldWinsOverEnvironment) {
  env_guard a("HYTASK_THREADS", "3");
  auto s = hytask::settings::resolve(hytask::config{.threads = 2});
  EXPECT_EQ(s.threads, 2u);
}

TEST(Config, InvalidEnvironmentValueNamesVariableValueAndAllowed) {
  env_guard a("HYTASK_THREADS", "lots");
  std::string msg = error_of();
  EXPECT_NE(msg.find("HYTASK_THREADS"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'lots'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("auto"), std::string::npos) << msg;
  EXPECT_NE(msg.find("4096"), std::string::npos) << msg;
}

TEST(Config, EveryKnobRejectsGarbage) {
  for (const auto& k : hytask::describe_knobs()) {
    if (k.variable == "HYTASK_TRACE") continue;  // any path is valid
    env_guard g(k.variable.c_str(), "not-a-value");
    std::string msg = error_of();
    EXPECT_NE(msg.find(k.variable), std::string::npos) << k.variable << ": " << msg;
    EXPECT_NE(msg.find("not-a-value"), std::string::npos) << msg;
  }
}

TEST(Config, OutOfRangeValuesAreRejected) {
  {
    env_guard g("HYTASK_THREADS", "0");
    EXPECT_NE(error_of().find("HYTASK_THREADS"), std::string::npos);
  }
  {
    env_guard g("HYTASK_STACK_SIZE", "1K");
    EXPECT_NE(error_of().find("HYTASK_STACK_SIZE"), std::string::npos);
  }
  {
    env_guard g("HYTASK_MAX_TASKS", "-5");
    EXPECT_NE(error_of().find("HYTASK_MAX_TASKS"), std::string::npos);
  }
  {
    env_guard g("HYTASK_RENAME_MAX_BYTES", "2048G");
    EXPECT_NE(error_of().find("HYTASK_RENAME_MAX_BYTES"), std::string::npos);
  }
  {
    env_guard g("HYTASK_RENAME_MAX_BYTES", "16M");
    EXPECT_EQ(hytask::settings::resolve().rename_max_bytes, 16u << 20);
  }
  {
    env_guard g("HYTASK_RENAME_MAX_BYTES", "0");  // renaming off
    EXPECT_EQ(hytask::settings::resolve().rename_max_bytes, 0u);
  }
}

TEST(Config, InvalidExplicitFieldIsRejected) {
  std::string msg = error_of(hytask::config{.threads = 0});
  EXPECT_NE(msg.find("threads"), std::string::npos) << msg;
  EXPECT_NE(msg.find("HYTASK_THREADS"), std::string::npos) << msg;
}

TEST(Config, RuntimeConstructorFailsOnInvalidValue) {
  env_guard g("HYTASK_SPIN_US", "forever");
  EXPECT_THROW(hytask::runtime rt, hytask::config_error);
  EXPECT_FALSE(hytask::runtime::active());
}

TEST(Config, ParseSize) {
  EXPECT_EQ(hytask::parse_size("4096"), 4096u);
  EXPECT_EQ(hytask::parse_size("256K"), 256u * 1024);
  EXPECT_EQ(hytask::parse_size("256KiB"), 256u * 1024);
  EXPECT_EQ(hytask::parse_size(" 2m "), 2u * 1024 * 1024);
  EXPECT_EQ(hytask::parse_size("1G"), 1024u * 1024 * 1024);
  EXPECT_FALSE(hytask::parse_size("12Q"));
  EXPECT_FALSE(hytask::parse_size(""));
  EXPECT_FALSE(hytask::parse_size("K"));
}

TEST(Config, DescribeKnobsReportsSources) {
  env_guard g("HYTASK_SPIN_US", "7");
  auto knobs = hytask::describe_knobs(hytask::config{.max_tasks = 100});
  bool saw_env = false, saw_config = false;
  for (const auto& k : knobs) {
    EXPECT_EQ(k.variable.rfind("HYTASK_", 0), 0u);
    EXPECT_FALSE(k.allowed.empty());
    EXPECT_FALSE(k.help.empty());
    if (k.variable == "HYTASK_SPIN_US") {
      EXPECT_EQ(k.value, "7");
      EXPECT_EQ(k.source, "environment");
      saw_env = true;
    }
    if (k.variable == "HYTASK_MAX_TASKS") {
      EXPECT_EQ(k.value, "100");
      EXPECT_EQ(k.source, "config");
      saw_config = true;
    }
  }
  EXPECT_TRUE(saw_env && saw_config);
}

TEST(Config, RuntimeReportsResolvedSettings) {
  hytask::runtime rt(hytask::config{.threads = 2, .max_tasks = 512});
  EXPECT_EQ(rt.settings().threads, 2u);
  EXPECT_EQ(rt.settings().max_tasks, 512u);
  EXPECT_EQ(hytask::worker_count(), 2u);
}

// Under Slurm, HYTASK_THREADS defaults to SLURM_CPUS_PER_TASK (--cpus-per-task); the
// variable and the explicit field still win, and hytask-info names the source.
TEST(Config, SlurmCpusPerTaskIsTheThreadsDefault) {
  env_unset t("HYTASK_THREADS");
  {
    env_unset none("SLURM_CPUS_PER_TASK");
    EXPECT_EQ(source_of("HYTASK_THREADS"), "default");
  }
  env_guard slurm("SLURM_CPUS_PER_TASK", "1");
  EXPECT_EQ(hytask::settings::resolve().threads, 1u);
  EXPECT_EQ(source_of("HYTASK_THREADS"), "slurm");
  {
    // At most the CPUs this process may run on (srun may bind a task to fewer).
    env_guard many("SLURM_CPUS_PER_TASK", "4096");
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    EXPECT_EQ(hytask::settings::resolve().threads, static_cast<unsigned>(CPU_COUNT(&set)));
  }
  {
    env_guard explicit_env("HYTASK_THREADS", "2");
    EXPECT_EQ(hytask::settings::resolve().threads, 2u);
    EXPECT_EQ(source_of("HYTASK_THREADS"), "environment");
  }
  EXPECT_EQ(hytask::settings::resolve(hytask::config{.threads = 5}).threads, 5u);
}

TEST(Config, InvalidSlurmCpusPerTaskIsAnErrorOnlyWhenItWouldBeUsed) {
  env_unset t("HYTASK_THREADS");
  env_guard slurm("SLURM_CPUS_PER_TASK", "0");
  const std::string msg = error_of();
  EXPECT_NE(msg.find("SLURM_CPUS_PER_TASK='0'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("set HYTASK_THREADS"), std::string::npos) << msg;
  env_guard explicit_env("HYTASK_THREADS", "2");
  EXPECT_EQ(error_of(), "");
  EXPECT_EQ(hytask::settings::resolve().threads, 2u);
}

TEST(Config, VerboseLevels) {
  {
    env_unset v("HYTASK_VERBOSE");
    EXPECT_EQ(hytask::settings::resolve().verbose, 1u);  // warnings
  }
  for (const char* level : {"0", "1", "2", "3"}) {
    env_guard v("HYTASK_VERBOSE", level);
    EXPECT_EQ(hytask::settings::resolve().verbose, static_cast<unsigned>(std::atoi(level)));
  }
  for (const char* bad : {"4", "-1", "loud"}) {
    env_guard v("HYTASK_VERBOSE", bad);
    const std::string msg = error_of();
    EXPECT_NE(msg.find(std::string("HYTASK_VERBOSE='") + bad + "' is invalid"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("from 0 to 3"), std::string::npos) << msg;
  }
  EXPECT_NE(error_of(hytask::config{.verbose = 9}).find("HYTASK_VERBOSE"), std::string::npos);
}
