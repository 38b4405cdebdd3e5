// The lease backend end to end: a resource manager and two executor managers (real `cppless`
// processes on loopback ports), this test binary shipped to them as the executors' executable.
#include "cluster_fixture.hpp"
#include "workloads.hpp"

#include <cppless/cppless.hpp>
#include <cppless/lease.hpp>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <thread>

namespace {

using namespace std::chrono_literals;
using lease_test::cluster;

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

// Recursive offload on a lease: inside an executor, lease_dispatcher::from_env() sends the
// nested calls back to the client, which runs them on the lease's executors.
long fib_leased(int n) {
  if (n <= 8) return fib_serial(n);
  auto dispatcher = cppless::lease_dispatcher::from_env();
  auto instance = dispatcher.create_instance({});
  auto task = [](int k) { return fib_leased(k); };
  long a = 0, b = 0;
  cppless::dispatch(instance, task, a, n - 1);
  cppless::dispatch(instance, task, b, n - 2);
  cppless::wait(instance, 2);
  return a + b;
}

std::string manager_of(const cppless::call_stats& s) { return s.invocation_id.substr(0, s.invocation_id.find('/')); }

TEST(LeaseDispatch, PiAndQueensOnTwoManagers) {
  cluster c;
  c.add_manager(2);
  c.add_manager(2);
  auto dispatcher = c.dispatcher();
  auto instance = dispatcher.create_instance({.cores = 4, .memory_mb = 512, .duration = 60s, .mode = cppless::hot});
  ASSERT_EQ(instance.executors().size(), 4u);

  // pi: every call's hits recomputed here.
  constexpr int calls = 16;
  constexpr long samples = 20'000;
  std::vector<long> hits(calls);
  std::map<std::int64_t, int> index;
  for (int i = 0; i < calls; ++i)
    index[cppless::dispatch(instance, [](std::uint64_t seed, long n) { return lease_test::pi_hits(seed, n); }, hits[i],
                            std::uint64_t(1000 + i), samples)] = i;
  std::set<std::string> managers;
  for (int i = 0; i < calls; ++i) {
    auto [id, stats] = instance.wait_one();
    ASSERT_TRUE(index.count(id));
    managers.insert(manager_of(stats));
    EXPECT_GT(stats.worker, 0);
  }
  long total = 0;
  for (int i = 0; i < calls; ++i) {
    EXPECT_EQ(hits[i], lease_test::pi_hits(1000 + i, samples)) << "call " << i;
    total += hits[i];
  }
  const double pi = 4.0 * total / (calls * samples);
  EXPECT_NEAR(pi, 3.14159, 0.05);
  EXPECT_EQ(managers.size(), 2u) << "calls should run on both managers";

  // n-queens N=9: 352 solutions, one call per column of the first row.
  constexpr int n = 9;
  std::vector<long> counts(n);
  for (int col = 0; col < n; ++col)
    cppless::dispatch(instance, [](int size, int first) { return lease_test::queens_first_col(size, first); }, counts[col], n, col);
  cppless::wait(instance, n);
  long solutions = 0;
  for (long v : counts) solutions += v;
  EXPECT_EQ(solutions, 352);

  // The managers accounted for it.
  const auto usage = instance.usage();
  EXPECT_EQ(usage.calls, static_cast<std::uint64_t>(calls + n));
  EXPECT_EQ(usage.executors, 4u);
  EXPECT_GT(usage.compute.count(), 0);
  EXPECT_GT(usage.allocation, usage.compute);
  EXPECT_GT(usage.hot_poll.count(), 0) << "hot executors poll between calls";
  EXPECT_GT(usage.cost(1.0, 1.0, 1.0), 0.0);
}

TEST(LeaseDispatch, AsyncErrorsVoidAndNestedCallsOnAWarmLease) {
  cluster c;
  c.add_manager(2);
  auto instance = c.dispatcher().create_instance({.cores = 2, .memory_mb = 512, .duration = 60s, .mode = cppless::warm});
  auto f = cppless::async(instance, [](int k) { return k * 2; }, 21);
  EXPECT_EQ(f.get(), 42);

  cppless::dispatch(instance, [] { throw std::invalid_argument("no such thing"); });
  try {
    cppless::wait(instance, 1);
    FAIL() << "expected a remote_error";
  } catch (const cppless::remote_error& e) {
    EXPECT_NE(e.remote_type().find("invalid_argument"), std::string::npos);
    EXPECT_EQ(e.remote_message().rfind("no such thing", 0), 0u);
  }
  cppless::dispatch(instance, [] {});
  cppless::wait(instance, 1);

  // fib(14) with every call above 8 dispatching its two halves from inside an executor.
  auto fib = cppless::async(instance, [](int n) { return fib_leased(n); }, 14);
  EXPECT_EQ(fib.get(), fib_serial(14));
  EXPECT_EQ(instance.usage().hot_poll.count(), 0) << "warm executors do not poll";
}

TEST(LeaseDispatch, ExecutableIsShippedOnceThenCached) {
  cluster c;
  c.add_manager(2);
  {
    auto first = c.dispatcher().create_instance({.cores = 2, .memory_mb = 256, .duration = 30s});
    int shipped = 0;
    for (auto& e : first.executors()) shipped += e.shipped;
    EXPECT_EQ(shipped, 1) << "only the first executor of a manager ships it";
  }
  auto second = c.dispatcher().create_instance({.cores = 2, .memory_mb = 256, .duration = 30s});
  for (auto& e : second.executors()) EXPECT_FALSE(e.shipped);
  EXPECT_EQ(cppless::async(second, [] { return 7; }).get(), 7);
}

// rFaaS' warm executors share cores: one that finds its core busy refuses the call at once and
// the client sends it on. Two warm executors pinned to one CPU, two calls of 150 ms: whichever
// arrives second is refused, re-sent, and still ends exactly once with the right result.
TEST(LeaseDispatch, WarmCallRefusedByABusyCoreIsSentAgain) {
  cluster c;
  c.add_manager(2, 4096, {"--cpus", "0"});
  auto instance = c.dispatcher().create_instance({.cores = 2, .memory_mb = 256, .duration = 60s, .mode = cppless::warm});
  auto slow = [](int k) {
    std::this_thread::sleep_for(150ms);  // the workload itself, not synchronisation
    return k + 1;
  };
  int a = 0, b = 0;
  cppless::dispatch(instance, slow, a, 1);
  cppless::dispatch(instance, slow, b, 2);
  cppless::wait(instance, 2);
  EXPECT_EQ(a, 2);
  EXPECT_EQ(b, 3);
  const auto usage = instance.usage();
  EXPECT_EQ(usage.calls, 2u);
  EXPECT_GE(usage.rejected, 1u);
}

TEST(LeaseDispatch, CliShowsALeaseAndItsUsage) {
  cluster c;
  c.add_manager(1);
  auto instance = c.dispatcher().create_instance({.cores = 1, .duration = 60s});
  EXPECT_EQ(cppless::async(instance, [] { return 5; }).get(), 5);
  const std::string command = "CPPLESS_RESOURCE_MANAGER=tcp://" + c.resource_manager().address +
                              " CPPLESS_USER=alice CPPLESS_SECRET=" + c.secret_of("alice") + " " + CPPLESS_CLI +
                              " lease-status " + instance.lease_id();
  // The managers report usage with their heartbeats: wait for the call to show.
  std::string out;
  EXPECT_TRUE(lease_test::eventually([&] {
    out.clear();
    FILE* p = ::popen(command.c_str(), "r");
    char buf[4096];
    while (p && std::fgets(buf, sizeof buf, p)) out += buf;
    if (p) ::pclose(p);
    return out.find("\"calls\": 1") != std::string::npos;
  })) << out;
  EXPECT_NE(out.find("\"state\": \"active\""), std::string::npos) << out;
  EXPECT_EQ(out.find("\"mac\""), std::string::npos) << "tokens are not printed";
}

TEST(LeaseDispatch, LeaseTooLargeIsRefused) {
  cluster c;
  c.add_manager(1);
  EXPECT_THROW(c.dispatcher().create_instance({.cores = 3}), cppless::lease_refused);
  EXPECT_THROW(c.dispatcher().create_instance({.cores = 1, .memory_mb = 100'000}), cppless::lease_refused);
}

}  // namespace
