// A server that is there but cannot serve for a while: restarting and loading its append-only
// file (LOADING), running a long script (BUSY), stopped (SIGSTOP). Calls wait within their retry
// budget, resend with the same call record, and end in a typed error when the budget is spent.
#include "redis_fixture.hpp"

#include <atomic>
#include <csignal>
#include <thread>

using namespace std::chrono_literals;
namespace sh = cppless::shared;
using cppless::testing::local_redis;
using sh::testing::admin;
using sh::testing::eventually;

namespace {

// Restores the process settings a test changes.
class settings_guard {
 public:
  settings_guard() : saved_(sh::process_settings()) {}
  ~settings_guard() { sh::process_settings() = saved_; }
  settings_guard(const settings_guard&) = delete;
  settings_guard& operator=(const settings_guard&) = delete;

 private:
  sh::settings saved_;
};

}  // namespace

TEST(shared_availability, CounterStaysExactAcrossAKillAndAofRestart) {
  settings_guard keep;
  sh::process_settings().retry_budget = 30s;  // outlasts the restart and the loading
  local_redis::options opts;
  // Every write is on disk before its reply; loading is slowed down (1 ms per key, 1,500 filler
  // keys), so the restarted server answers LOADING for about 1.5 s.
  opts.extra_args = {"--appendonly", "yes", "--appendfsync", "always", "--key-load-delay", "1000"};
  local_redis redis(opts);
  admin(redis, {"EVAL", "for i = 1, 1500 do redis.call('SET', 'filler' .. i, 'x') end", "0"});
  auto store = sh::store::connect(redis.url());
  auto c = store.counter("c");

  std::atomic<long> acknowledged{0};
  std::atomic<bool> stop{false}, failed{false};
  std::string failure;  // read after join
  std::jthread adder([&] {
    try {
      while (!stop) {
        c.add(1);
        ++acknowledged;
      }
    } catch (const std::exception& e) {
      failure = e.what();
      failed = true;
    }
  });
  struct stop_on_exit {
    std::atomic<bool>& flag;
    ~stop_on_exit() { flag = true; }  // before the adder is joined, even when an ASSERT returns
  } stopper{stop};
  ASSERT_TRUE(eventually([&] { return acknowledged >= 200 || failed; }));
  redis.kill();  // mid-run: an add may be applied with its reply lost
  redis.restart();
  // The premise: the restarted server is loading (the adder meets LOADING, not only refusals).
  EXPECT_EQ(admin(redis, {"PING"}).substr(0, 7), "LOADING");
  const long at_restart = acknowledged;
  EXPECT_TRUE(eventually([&] { return acknowledged >= at_restart + 200 || failed; }, 60s));
  stop = true;
  adder.join();
  EXPECT_EQ(failure, "");
  EXPECT_EQ(c.get(), acknowledged.load());
}

TEST(shared_availability, BusyScriptIsWaitedOut) {
  settings_guard keep;
  sh::process_settings().retry_budget = 20s;
  local_redis::options opts;
  opts.extra_args = {"--busy-reply-threshold", "50"};  // BUSY after a script ran 50 ms
  local_redis redis(opts);
  auto store = sh::store::connect(redis.url());
  auto c = store.counter("c");
  c.add(1);
  // Someone else's script that runs for 1.5 s.
  std::jthread busy([&] {
    admin(redis, {"EVAL",
                  "local t = redis.call('TIME') local t0 = t[1] * 1000000 + t[2] "
                  "repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - t0 > 1500000 return 1",
                  "0"});
  });
  ASSERT_TRUE(eventually([&] { return admin(redis, {"PING"}).starts_with("BUSY"); }));
  std::int64_t after = 0;
  EXPECT_NO_THROW(after = c.add(1));  // waited out, applied once
  EXPECT_EQ(after, 2);
  busy.join();
  EXPECT_EQ(c.get(), 2);
}

TEST(shared_availability, BudgetBoundsACallToAStoppedServer) {
  settings_guard keep;
  sh::process_settings().retry_budget = 2s;  // the command timeout stays 10 s
  local_redis redis;
  auto store = sh::store::connect(redis.url());
  auto c = store.counter("c");
  c.add(1);
  ASSERT_EQ(::kill(redis.pid(), SIGSTOP), 0);
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(c.add(1), sh::outcome_unknown);  // sent, no reply: it may apply when the server resumes
  auto add_took = std::chrono::steady_clock::now() - start;
  start = std::chrono::steady_clock::now();
  try {
    (void)c.get();
    ADD_FAILURE() << "read a stopped server";
  } catch (const sh::outcome_unknown&) {
    ADD_FAILURE() << "a read is never an unknown outcome";
  } catch (const sh::connection_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(redis.port())), std::string::npos) << e.what();
  }
  auto get_took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(::kill(redis.pid(), SIGCONT), 0);
  // The budget, not 9 resends x the 10 s command timeout (92 s before); generous for a loaded machine.
  EXPECT_LT(add_took, 6s);
  EXPECT_LT(get_took, 6s);
  const auto now = c.get();
  EXPECT_TRUE(now == 1 || now == 2) << now;
  EXPECT_EQ(c.add(1), now + 1);
}

TEST(shared_availability, BudgetMustBeShorterThanTheRecords) {
  settings_guard keep;
  local_redis redis;
  auto store = sh::store::connect(redis.url());
  sh::process_settings().retry_budget = 0ms;
  EXPECT_THROW(store.counter("c"), sh::invalid_argument);
  sh::process_settings().retry_budget = std::chrono::hours(1);
  EXPECT_THROW(store.counter("c"), sh::invalid_argument);
}
