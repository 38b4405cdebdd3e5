// Linearizability under concurrency: several worker processes (fork, each with its own
// connections) operate on the same objects; the checks hold only if every operation took effect
// exactly once, atomically, in one total order.
#include "redis_fixture.hpp"

#include <algorithm>
#include <random>
#include <set>
#include <sstream>
#include <thread>

using namespace std::chrono_literals;
namespace sh = cppless::shared;
using sh::testing::in_processes;
using sh::testing::shared_test;

namespace {

std::vector<std::int64_t> numbers(const std::string& text) {
  std::vector<std::int64_t> v;
  std::istringstream in(text);
  for (std::int64_t x; in >> x;) v.push_back(x);
  return v;
}

}  // namespace

TEST_F(shared_test, CounterAddsAreDistinctAndTotal) {
  constexpr int procs = 6, adds = 300;
  auto c = store_.counter("c");
  auto outs = in_processes(procs, [&](int) {
    std::string seen;
    for (int i = 0; i < adds; ++i) seen += std::to_string(c.add(1)) + " ";
    return seen;
  });
  // Each add returned the total it produced: together they are exactly 1..procs*adds.
  std::vector<std::int64_t> all;
  for (auto& o : outs) {
    auto v = numbers(o);
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));  // one process sees its totals increase
    all.insert(all.end(), v.begin(), v.end());
  }
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), static_cast<std::size_t>(procs * adds));
  for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<std::int64_t>(i + 1));
  EXPECT_EQ(c.get(), procs * adds);
}

TEST_F(shared_test, CompareExchangeIncrementsAreLinearizable) {
  constexpr int procs = 4, incs = 150;
  auto a = store_.atomic<std::int64_t>("a", 0);
  auto outs = in_processes(procs, [&](int) {
    std::string won;
    for (int i = 0; i < incs; ++i) {
      std::int64_t cur = a.load();
      while (!a.compare_exchange(cur, cur + 1)) {
      }
      won += std::to_string(cur) + " ";
    }
    return won;
  });
  // Every successful CAS replaced a distinct value: 0..N-1, each exactly once.
  std::vector<std::int64_t> all;
  for (auto& o : outs) {
    auto v = numbers(o);
    all.insert(all.end(), v.begin(), v.end());
  }
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), static_cast<std::size_t>(procs * incs));
  for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<std::int64_t>(i));
  EXPECT_EQ(a.load(), procs * incs);
}

TEST_F(shared_test, BestKeepsValueAndPayloadTogether) {
  constexpr int procs = 5, offers = 200;
  auto best = store_.best<std::int64_t, std::vector<std::int64_t>>("best", sh::maximize);
  // Process 0 only reads: every snapshot must pair a value with its own payload, and values read
  // one after another never decrease (a maximum register is monotone).
  auto outs = in_processes(procs + 1, [&](int id) -> std::string {
    if (id == 0) {
      std::int64_t last = std::numeric_limits<std::int64_t>::lowest();
      for (int i = 0; i < 300; ++i) {
        auto s = best.get();
        if (s.payload && ((*s.payload)[0] != s.value || (*s.payload)[1] != 3 * s.value))
          throw std::runtime_error("torn read: value and payload from different offers");
        if (s.value < last) throw std::runtime_error("best value went down");
        last = s.value;
      }
      return "";
    }
    std::mt19937_64 rng(static_cast<std::uint64_t>(id));
    std::string improved;
    std::int64_t my_last = std::numeric_limits<std::int64_t>::lowest();
    for (int i = 0; i < offers; ++i) {
      // Distinct across processes: the low digit is the process id.
      std::int64_t v = static_cast<std::int64_t>(rng() % 1'000'000) * 10 + id;
      if (best.offer(v, {v, 3 * v})) {
        if (v <= my_last) throw std::runtime_error("an offer improved on a larger earlier improvement");
        my_last = v;
        improved += std::to_string(v) + " ";
      }
    }
    return improved;
  });
  std::int64_t expected = std::numeric_limits<std::int64_t>::lowest();
  for (int id = 1; id <= procs; ++id) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(id));
    for (int i = 0; i < offers; ++i) expected = std::max(expected, static_cast<std::int64_t>(rng() % 1'000'000) * 10 + id);
  }
  auto s = best.get();
  EXPECT_EQ(s.value, expected);
  ASSERT_TRUE(s.payload.has_value());
  EXPECT_EQ((*s.payload), (std::vector<std::int64_t>{expected, 3 * expected}));
  // The offer of the maximum reported that it improved, in exactly one process.
  int reported = 0;
  for (auto& o : outs)
    for (auto v : numbers(o)) reported += v == expected;
  EXPECT_EQ(reported, 1);
}

TEST_F(shared_test, MapMergesFromProcesses) {
  constexpr int procs = 4, merges = 100;
  auto sums = store_.map<int, std::int64_t>("sums");
  auto lows = store_.map<int, double>("lows");
  in_processes(procs, [&](int id) {
    for (int i = 0; i < merges; ++i) {
      sums.merge(i % 5, i, sh::merge_op::add);
      lows.merge(i % 5, id * 1000.0 + i, sh::merge_op::min);
    }
    return std::string();
  });
  for (int k = 0; k < 5; ++k) {
    std::int64_t want = 0;
    for (int i = k; i < merges; i += 5) want += i;
    EXPECT_EQ(sums.get(k), want * procs) << k;
    EXPECT_EQ(lows.get(k), static_cast<double>(k)) << k;
  }
}

TEST_F(shared_test, QueueDeliversEveryItemOnce) {
  constexpr int producers = 3, consumers = 3, items = 150;
  auto q = store_.queue<int>("work");
  auto done = store_.latch("producers", producers);
  auto outs = in_processes(producers + consumers, [&](int id) -> std::string {
    if (id < producers) {
      for (int i = 0; i < items; ++i) q.push(id * 10'000 + i);
      // The last producer ends the stream: one sentinel per consumer, after every item (FIFO).
      if (done.count_down() == 0)
        for (int c = 0; c < consumers; ++c) q.push(-1);
      return "";
    }
    std::string got;
    for (;;) {
      int v = q.pop(20s);
      if (v < 0) return got;
      got += std::to_string(v) + " ";
    }
  });
  std::multiset<std::int64_t> all;
  for (auto& o : outs)
    for (auto v : numbers(o)) all.insert(v);
  ASSERT_EQ(all.size(), static_cast<std::size_t>(producers * items));
  for (int p = 0; p < producers; ++p)
    for (int i = 0; i < items; ++i) ASSERT_EQ(all.count(p * 10'000 + i), 1u) << p << " " << i;
  EXPECT_EQ(q.size(), 0);
}

TEST_F(shared_test, SemaphoreBoundsConcurrency) {
  constexpr int procs = 5, rounds = 10;
  auto sem = store_.semaphore("sem", 2);
  auto inside = store_.counter("inside");
  auto peak = store_.best<std::int64_t, int>("peak", sh::maximize);
  in_processes(procs, [&](int id) {
    for (int i = 0; i < rounds; ++i) {
      sem.acquire(1, 20s);
      std::int64_t now = inside.add(1);
      peak.offer(now, id);
      if (now > 2) throw std::runtime_error("3 holders of a 2-permit semaphore");
      std::this_thread::sleep_for(1ms);
      inside.add(-1);
      sem.release();
    }
    return std::string();
  });
  EXPECT_EQ(peak.value(), 2);  // both permits were used at once at some point
  EXPECT_EQ(sem.available(), 2);
  EXPECT_EQ(inside.get(), 0);
}

TEST_F(shared_test, LatchReleasesEveryWaiter) {
  constexpr int waiters = 5;
  auto gate = store_.latch("gate", 3);
  const int base = sh::testing::blocked_clients_target();
  // The latch is counted down only once all waiters are blocked on it (observed on the server),
  // and each waiter reports the count it sees after passing: a latch that let anyone through
  // early would show a count above zero, one that never woke them would fail their waits.
  std::thread opener([&] {
    if (!sh::testing::eventually([&] { return sh::testing::blocked_clients_target() >= base + waiters; }))
      ADD_FAILURE() << "the waiters never blocked";
    for (int i = 0; i < 3; ++i) gate.count_down();
  });
  auto outs = in_processes(waiters, [&](int) {
    gate.wait(20s);
    return "passed at " + std::to_string(gate.count());
  });
  opener.join();
  for (auto& o : outs) EXPECT_EQ(o, "passed at 0");
}

TEST_F(shared_test, FutureWakesEveryReader) {
  constexpr int readers = 5;
  auto f = store_.write_once<std::string>("answer");
  const int base = sh::testing::blocked_clients_target();
  std::thread setter([&] {
    if (!sh::testing::eventually([&] { return sh::testing::blocked_clients_target() >= base + readers; }))
      ADD_FAILURE() << "the readers never blocked";
    f.set("forty-two");
  });
  auto outs = in_processes(readers, [&](int) { return f.get(20s); });
  setter.join();
  for (auto& o : outs) EXPECT_EQ(o, "forty-two");
}

TEST_F(shared_test, BarrierSeparatesGenerations) {
  constexpr int procs = 5, generations = 20;
  auto bar = store_.barrier("bar", procs);
  auto work = store_.counter("work");
  in_processes(procs, [&](int) {
    for (int g = 0; g < generations; ++g) {
      work.add(1);
      std::int64_t gen = bar.arrive_and_wait(20s);
      if (gen != g) throw std::runtime_error("generation " + std::to_string(gen) + ", expected " + std::to_string(g));
      // Everyone's work of generation g is done; nobody can be past generation g + 1.
      std::int64_t seen = work.get();
      if (seen < procs * (g + 1) || seen > procs * (g + 2))
        throw std::runtime_error("generation " + std::to_string(g) + " saw work " + std::to_string(seen));
    }
    return std::string();
  });
  EXPECT_EQ(work.get(), procs * generations);
}

TEST_F(shared_test, ThreadsShareHandlesToo) {
  // Several threads of one process use one handle at once (pooled connections).
  auto c = store_.counter("threads");
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 200; ++i) c.add(1);
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(c.get(), 800);
}
