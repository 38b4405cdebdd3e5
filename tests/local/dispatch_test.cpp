// The local backend end to end: real worker processes (this test binary in worker mode).
#include <cppless/cppless.hpp>

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include <cstdlib>
#include <unistd.h>

namespace {

struct particle {
  double x = 0, y = 0;
  std::string name;
  template <class A>
  void serialize(A& ar) {
    ar(x, y, name);
  }
};

cppless::local_dispatcher& dispatcher() {
  static cppless::local_dispatcher d;
  return d;
}

TEST(LocalDispatch, ResultArgumentsAndCaptures) {
  auto instance = dispatcher().create_instance();
  const std::string greeting = "hello";
  const std::vector<int> numbers{1, 2, 3, 4};
  const std::map<std::string, int> weights{{"a", 1}, {"b", 2}};
  particle p{1.5, 2.5, "p"};
  std::string out;
  auto fn = [greeting, numbers, weights, p](const std::string& who, int times) {
    std::string s = greeting + ", " + who + ":";
    for (int i = 0; i < times; ++i) s += std::to_string(std::accumulate(numbers.begin(), numbers.end(), 0));
    return s + std::to_string(weights.at("b")) + p.name + std::to_string(p.x + p.y);
  };
  int id = static_cast<int>(cppless::dispatch(instance, fn, out, std::string("world"), 2));
  auto [done, stats] = instance.wait_one();
  EXPECT_EQ(done, id);
  EXPECT_EQ(out, fn("world", 2));
  EXPECT_GT(stats.worker, 0);
  EXPECT_GE(stats.round_trip, stats.execution);
  EXPECT_GE(stats.queued.count(), 0);
}

// Many short calls: statistics stay consistent however the host's and the worker's clocks
// (steady_clock and the TSC-based one of the hot path) were read.
TEST(LocalDispatch, StatisticsOfManyShortCallsAreConsistent) {
  auto instance = dispatcher().create_instance();
  int out = 0;
  for (int i = 0; i < 2000; ++i) {
    cppless::dispatch(instance, [](int x) { return x + 1; }, out, i);
    auto [id, stats] = instance.wait_one();
    ASSERT_EQ(out, i + 1);
    ASSERT_GE(stats.queued.count(), 0) << "call " << id;
    ASSERT_GT(stats.round_trip.count(), 0) << "call " << id;
    ASSERT_GE(stats.execution.count(), 0) << "call " << id;
  }
}

TEST(LocalDispatch, VoidFunctionsAndFutures) {
  auto instance = dispatcher().create_instance();
  cppless::dispatch(instance, [](int) {}, 5);
  cppless::dispatch(instance, [] {});
  cppless::wait(instance, 2);
  auto f = cppless::async(instance, [](int k) { return k * 2; }, 21);
  auto g = cppless::async(instance, [] {});
  EXPECT_EQ(f.get(), 42);
  g.get();
  EXPECT_FALSE(f.valid());
}

TEST(LocalDispatch, ConfigsAreSeparateFunctions) {
  auto instance = dispatcher().create_instance();
  auto fn = [] { return 1; };
  int a = 0, b = 0;
  cppless::dispatch<cppless::config<cppless::with_memory<256>>>(instance, fn, a);
  cppless::dispatch<cppless::config<cppless::with_memory<512>, cppless::with_timeout<10>>>(instance, fn, b);
  cppless::wait(instance, 2);
  EXPECT_EQ(a + b, 2);
}

TEST(LocalDispatch, TwoThousandConcurrentCallsEachEndOnce) {
  auto instance = dispatcher().create_instance();
  constexpr int n = 2000;
  std::vector<long> results(n, -1);
  std::map<std::int64_t, int> index_of;
  for (int i = 0; i < n; ++i) {
    auto id = cppless::dispatch(instance, [](long k) { return k * k; }, results[i], static_cast<long>(i));
    index_of[id] = i;
  }
  std::set<std::int64_t> seen;
  for (int i = 0; i < n; ++i) {
    auto [id, stats] = instance.wait_one();
    EXPECT_TRUE(seen.insert(id).second) << "id " << id << " returned twice";
    EXPECT_EQ(results[index_of.at(id)], static_cast<long>(index_of.at(id)) * index_of.at(id));
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(instance.pending(), 0u);
  EXPECT_THROW(instance.wait_one(), cppless::error);
}

TEST(LocalDispatch, WarmWorkersAreReused) {
  cppless::local_options options;
  options.workers = 1;
  cppless::local_dispatcher one(options);
  auto instance = one.create_instance();
  std::vector<cppless::call_stats> stats;
  for (int i = 0; i < 3; ++i) {
    int r;
    cppless::dispatch(instance, [] { return 1; }, r);
    stats.push_back(instance.wait_one().second);
  }
  EXPECT_TRUE(stats[0].cold);
  EXPECT_FALSE(stats[1].cold);
  EXPECT_EQ(stats[0].worker, stats[2].worker);
  EXPECT_EQ(one.workers_started(), 1u);
}

TEST(LocalDispatch, ColdModeStartsAProcessPerCall) {
  cppless::local_options options;
  options.mode = cppless::local_options::start_mode::cold;
  options.workers = 2;
  cppless::local_dispatcher cold(options);
  auto instance = cold.create_instance();
  std::vector<int> r(4);
  for (auto& x : r) cppless::dispatch(instance, [] { return 7; }, x);
  std::set<int> pids;
  for (int i = 0; i < 4; ++i) {
    auto [id, stats] = instance.wait_one();
    EXPECT_TRUE(stats.cold);
    pids.insert(stats.worker);
  }
  EXPECT_EQ(pids.size(), 4u);
  EXPECT_EQ(r, std::vector<int>(4, 7));
}

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

long fib_nested(int n) {
  if (n < 8) return fib_serial(n);
  cppless::local_dispatcher inner;
  auto instance = inner.create_instance();
  long a = 0, b = 0;
  auto task = [](int k) { return fib_nested(k); };
  cppless::dispatch(instance, task, a, n - 1);
  cppless::dispatch(instance, task, b, n - 2);
  cppless::wait(instance, 2);
  return a + b;
}

TEST(LocalDispatch, NestedDispatchIsBoundedAndDeadlockFree) {
  cppless::local_options options;
  options.workers = 2;
  cppless::local_dispatcher small(options);
  auto instance = small.create_instance();
  auto f = cppless::async(instance, [](int n) { return fib_nested(n); }, 14);
  EXPECT_EQ(f.get(), fib_serial(14));
  EXPECT_LE(small.workers_started(), 2u);
}

TEST(LocalDispatch, LargePayloadsStreamThroughTheRings) {
  auto instance = dispatcher().create_instance();
  std::vector<std::uint32_t> big(3'000'000);  // 12 MB each way: many times the ring size
  std::iota(big.begin(), big.end(), 0u);
  auto f = cppless::async(instance, [](std::vector<std::uint32_t> v) {
    for (auto& x : v) x *= 2;
    return v;
  }, big);
  auto g = cppless::async(instance, [big] { return big.size(); });  // a large capture too
  auto doubled = f.get();
  ASSERT_EQ(doubled.size(), big.size());
  EXPECT_EQ(doubled[12345], 24690u);
  EXPECT_EQ(doubled.back(), 2u * (big.size() - 1));
  EXPECT_EQ(g.get(), big.size());
}

TEST(LocalDispatch, WorkersOutliveTheThreadThatStartedThem) {
  cppless::local_options options;
  options.workers = 1;
  cppless::local_dispatcher fresh(options);
  std::thread([&] {
    auto instance = fresh.create_instance();
    EXPECT_EQ(cppless::async(instance, [] { return 1; }).get(), 1);
  }).join();
  auto instance = fresh.create_instance();
  EXPECT_EQ(cppless::async(instance, [] { return 2; }).get(), 2);
  EXPECT_EQ(fresh.workers_started(), 1u);
}

TEST(LocalDispatch, ManyInstancesFromManyThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto instance = dispatcher().create_instance();
      std::vector<int> r(50);
      for (int i = 0; i < 50; ++i) cppless::dispatch(instance, [](int a, int b) { return a + b; }, r[i], t, i);
      cppless::wait(instance, 50);
      bool ok = true;
      for (int i = 0; i < 50; ++i) ok &= r[i] == t + i;
      good += ok;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 4);
}

}  // namespace

// The environment's overrides of a default-constructed dispatcher; malformed values are refused.
TEST(LocalDispatch, EnvironmentOverridesAndRefusesMalformedValues) {
  ::setenv("CPPLESS_WORKERS", "1", 1);
  ::setenv("CPPLESS_PREFETCH", "2", 1);
  {
    cppless::local_dispatcher one;
    auto instance = one.create_instance();
    std::vector<int> pids(6);
    for (auto& pid : pids) cppless::dispatch(instance, [] { return static_cast<int>(::getpid()); }, pid);
    cppless::wait(instance, pids.size());
    EXPECT_EQ(std::set<int>(pids.begin(), pids.end()).size(), 1u) << "one worker serves every call";
  }
  ::setenv("CPPLESS_PREFETCH", "two", 1);
  try {
    cppless::local_dispatcher bad;
    FAIL() << "a malformed CPPLESS_PREFETCH was accepted";
  } catch (const cppless::error& e) {
    EXPECT_NE(std::string(e.what()).find("CPPLESS_PREFETCH='two'"), std::string::npos) << e.what();
  }
  ::unsetenv("CPPLESS_PREFETCH");
  ::setenv("CPPLESS_WORKERS", "-3", 1);
  EXPECT_THROW(cppless::local_dispatcher{}, cppless::error);
  ::unsetenv("CPPLESS_WORKERS");
}
