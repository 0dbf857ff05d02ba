// The learnt ceiling of a polling thread's period (src/comm/period_ceiling.hpp): an eighth
// of the typical exchange, within [configured, 4 x configured].
#include <gtest/gtest.h>

#include <cstdint>

#include "comm/period_ceiling.hpp"

namespace {

using hytask::mpi::detail::period_ceiling;

constexpr std::int64_t us = 1000, ms = 1000 * us;

// One exchange from t to t + length; returns the ceiling after it.
std::int64_t exchange(period_ceiling& c, std::int64_t& t, std::int64_t length) {
  c.started(t);
  t += length;
  c.ended(t);
  t += 1 * ms;
  return c.value();
}

TEST(PeriodCeiling, StartsAtTheConfiguredCeiling) {
  period_ceiling c(500 * us);
  EXPECT_EQ(c.value(), 500 * us);
}

TEST(PeriodCeiling, ShortExchangesKeepTheConfiguredCeiling) {
  period_ceiling c(500 * us);
  std::int64_t t = 0;
  for (int i = 0; i < 20; ++i) EXPECT_EQ(exchange(c, t, 300 * us), 500 * us);
  // Eight configured ceilings long: still the configured one.
  for (int i = 0; i < 20; ++i) EXPECT_EQ(exchange(c, t, 4 * ms), 500 * us);
}

TEST(PeriodCeiling, ALongExchangeStretchesItToAnEighth) {
  period_ceiling c(500 * us);
  std::int64_t t = 0;
  EXPECT_EQ(exchange(c, t, 10 * ms), 1250 * us);  // the first sets the typical length
  for (int i = 0; i < 10; ++i) exchange(c, t, 12 * ms);
  EXPECT_NEAR(static_cast<double>(c.value()), 1500.0 * us, 20.0 * us);
}

TEST(PeriodCeiling, TheStretchIsCappedAtFourTimesTheSetting) {
  period_ceiling c(500 * us);
  std::int64_t t = 0;
  for (int i = 0; i < 10; ++i) EXPECT_LE(exchange(c, t, 200 * ms), 2 * ms);
  EXPECT_EQ(c.value(), 2 * ms);
}

TEST(PeriodCeiling, OneLongExchangeAmongShortOnesMovesItPartlyAndShortOnesBringItBack) {
  period_ceiling c(500 * us);
  std::int64_t t = 0;
  for (int i = 0; i < 10; ++i) exchange(c, t, 10 * ms);
  const std::int64_t settled = c.value();
  EXPECT_EQ(settled, 1250 * us);
  const std::int64_t after_long = exchange(c, t, 30 * ms);  // typical 15 ms: 1.875 ms
  EXPECT_GT(after_long, settled);
  EXPECT_LT(after_long, 2 * ms);
  for (int i = 0; i < 30; ++i) exchange(c, t, 1 * ms);
  EXPECT_EQ(c.value(), 500 * us);
}

TEST(PeriodCeiling, AnEndWithoutAStartChangesNothing) {
  period_ceiling c(500 * us);
  c.ended(100 * ms);
  EXPECT_EQ(c.value(), 500 * us);
  std::int64_t t = 0;
  exchange(c, t, 16 * ms);
  const std::int64_t v = c.value();
  c.ended(t + 50 * ms);  // the end of nothing: a second look with nothing pending
  EXPECT_EQ(c.value(), v);
}

}  // namespace
