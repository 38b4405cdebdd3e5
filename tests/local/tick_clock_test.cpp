// The hot path's clock: never goes back, and after it has switched to the time-stamp counter
// it still tells steady_clock's time (the two are compared, not timed: the bound is generous).
#include "../../src/local/tick_clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace {

using cppless::clock;
using cppless::local::tick_clock;

TEST(TickClock, NeverGoesBack) {
  auto last = tick_clock::now();
  for (int i = 0; i < 2'000'000; ++i) {
    const auto t = tick_clock::now();
    ASSERT_GE(t, last) << "at reading " << i;
    last = t;
  }
}

TEST(TickClock, AgreesWithSteadyClockOnceCalibrated) {
  // Long enough for the rate to be measured (a few ms of counter) on this thread.
  const auto until = clock::now() + std::chrono::milliseconds(30);
  while (clock::now() < until) (void)tick_clock::now();
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const auto before = clock::now();
    const auto t = tick_clock::now();
    const auto after = clock::now();
    // Between two steady readings, give or take a millisecond of rate error (it is microseconds).
    EXPECT_GE(t, before - std::chrono::milliseconds(1));
    EXPECT_LE(t, after + std::chrono::milliseconds(1));
  }
}

TEST(TickClock, EachThreadCalibratesItsOwn) {
  clock::time_point seen{};
  std::thread([&] { seen = tick_clock::now(); }).join();
  EXPECT_NE(seen, clock::time_point{});
  EXPECT_LE(seen, clock::now());
}

}  // namespace
