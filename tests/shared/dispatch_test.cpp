// Handles captured in lambdas and run by cppless' local workers (separate processes started
// from this executable): they deserialize, connect on first use and share state with the host.
#include "redis_fixture.hpp"

#include <cppless/cppless.hpp>

#include <algorithm>

using namespace std::chrono_literals;
namespace sh = cppless::shared;
using sh::testing::shared_test;

namespace {

cppless::local_dispatcher& dispatcher() {
  static cppless::local_dispatcher d([] {
    cppless::local_options o;
    o.workers = 4;  // enough to hold a barrier of 4 functions at once
    return o;
  }());
  return d;
}

}  // namespace

TEST_F(shared_test, FunctionsShareCounterAndBest) {
  auto inst = dispatcher().create_instance();
  auto visited = store_.counter("visited");
  auto best = store_.best<int, std::vector<int>>("best", sh::maximize);
  constexpr int n = 40;
  std::vector<std::int64_t> totals(n);
  auto task = [visited, best](int i) {
    best.offer((i * 7) % n, {i, (i * 7) % n});
    return visited.add(1);
  };
  for (int i = 0; i < n; ++i) cppless::dispatch(inst, task, totals[i], i);
  cppless::wait(inst, n);
  std::sort(totals.begin(), totals.end());
  for (int i = 0; i < n; ++i) EXPECT_EQ(totals[i], i + 1);
  EXPECT_EQ(visited.get(), n);
  auto s = best.get();
  EXPECT_EQ(s.value, n - 1);
  ASSERT_TRUE(s.payload.has_value());
  EXPECT_EQ((*s.payload)[1], n - 1);
}

TEST_F(shared_test, FunctionsMeetAtABarrier) {
  auto inst = dispatcher().create_instance();
  auto bar = store_.barrier("bar", 4);
  auto log = store_.queue<int>("log");
  std::vector<std::int64_t> last(4);
  auto task = [bar, log](int id) {
    std::int64_t gen = 0;
    for (int g = 0; g < 5; ++g) {
      log.push(g * 10 + id);
      gen = bar.arrive_and_wait(20s);
    }
    return gen;
  };
  for (int i = 0; i < 4; ++i) cppless::dispatch(inst, task, last[i], i);
  cppless::wait(inst, 4);
  for (auto g : last) EXPECT_EQ(g, 4);
  // Generations never mix: every entry of generation g comes before any of g + 1.
  std::vector<int> order;
  while (auto v = log.try_pop()) order.push_back(*v / 10);
  ASSERT_EQ(order.size(), 20u);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
}

TEST_F(shared_test, FunctionsOpenObjectsThroughACapturedStore) {
  auto inst = dispatcher().create_instance();
  auto s = store_;
  auto result = cppless::async(inst, [s](std::string name) { return s.counter(name).add(5); }, std::string("opened"));
  EXPECT_EQ(result.get(), 5);
  EXPECT_EQ(store_.counter("opened").get(), 5);
  // A future set by a function, awaited by the host.
  auto answer = store_.write_once<std::string>("answer");
  cppless::dispatch(inst, [answer] { answer.set("from a worker"); });
  EXPECT_EQ(answer.get(10s), "from a worker");
  cppless::wait(inst, 1);
}

TEST_F(shared_test, ErrorsInFunctionsComeBackTyped) {
  auto inst = dispatcher().create_instance();
  store_.counter("taken");
  auto s = store_;
  auto bad = cppless::async(inst, [s] { return s.atomic<int>("taken").load(); });
  try {
    bad.get();
    FAIL() << "a counter was read as atomic<int> in a function";
  } catch (const cppless::remote_error& e) {
    EXPECT_NE(e.remote_type().find("type_mismatch"), std::string::npos) << e.remote_type();
    EXPECT_NE(e.remote_message().find("'taken'"), std::string::npos) << e.remote_message();
  }
}

TEST_F(shared_test, CloudThreadsInvokeAllAndParallelFor) {
  auto inst = dispatcher().create_instance();
  auto hits = store_.counter("hits");
  // Crucial's CloudThread: start, join.
  std::vector<cppless::cloud_thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(inst, [hits](int k) { hits.add(k); }, i + 1);
  for (auto& t : threads) t.join();
  EXPECT_EQ(hits.get(), 1 + 2 + 3 + 4);
  // invokeAll: results in order.
  auto make = [](int k) { return [k] { return k * k; }; };  // one closure type, many captures
  std::vector<decltype(make(0))> tasks;
  for (int k = 0; k < 6; ++k) tasks.push_back(make(k));
  EXPECT_EQ(cppless::invoke_all(inst, tasks), (std::vector<int>{0, 1, 4, 9, 16, 25}));
  // invokeIterativeTask: every index once, across 5 functions.
  auto sum = store_.counter("sum");
  auto calls = store_.counter("calls");
  cppless::parallel_for(inst, 10, 110, 5, [sum, calls](std::int64_t i) {
    sum.add(i);
    calls.add(1);
  });
  EXPECT_EQ(calls.get(), 100);
  EXPECT_EQ(sum.get(), (10 + 109) * 100 / 2);
  // A failure inside a thread is rethrown by join().
  cppless::cloud_thread failing(inst, [s = store_] { (void)s.atomic<int>("sum").load(); });
  EXPECT_THROW(failing.join(), cppless::remote_error);
}

TEST_F(shared_test, CloudThreadRetriesAFailingFunction) {
  auto inst = dispatcher().create_instance();
  auto runs = store_.counter("runs");
  // Fails on its first two runs, succeeds on the third.
  auto flaky = [runs] {
    if (runs.add(1) < 3) throw std::runtime_error("not yet");
  };
  auto t = cppless::cloud_thread::start_with_retries(inst, 3, flaky);
  EXPECT_NO_THROW(t.join());
  EXPECT_EQ(t.attempts(), 3);
  EXPECT_EQ(runs.get(), 3);
  // Too few retries: the last failure comes back.
  runs.reset(0);
  auto short_of_retries = cppless::cloud_thread::start_with_retries(inst, 1, flaky);
  EXPECT_THROW(short_of_retries.join(), cppless::remote_error);
  EXPECT_EQ(short_of_retries.attempts(), 2);
  EXPECT_EQ(runs.get(), 2);
}
