// The client side of tests/lease/netns_test.sh: run inside the client's network namespace, with
// the resource manager and two executor managers in namespaces of their own. Skipped when run
// on its own.
#include "workloads.hpp"

#include <cppless/cppless.hpp>
#include <cppless/lease.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

namespace {

using namespace std::chrono_literals;

TEST(LeaseNetns, PiAndQueensAcrossNamespaces) {
  const char* rm = std::getenv("LEASE_NETNS_RM");
  if (!rm) GTEST_SKIP() << "run by tests/lease/netns_test.sh";
  cppless::lease_options o;
  o.resource_manager = rm;
  o.user = "alice";
  o.secret = std::getenv("LEASE_NETNS_SECRET");
  auto instance = cppless::lease_dispatcher(o).create_instance({.cores = 4, .memory_mb = 256, .duration = 60s});
  std::set<std::string> addresses;
  for (auto& e : instance.executors()) addresses.insert(e.address);
  const std::string expected = std::getenv("LEASE_NETNS_MANAGERS");
  EXPECT_EQ(addresses.size(), 2u);
  for (auto& a : addresses) EXPECT_NE(expected.find(a), std::string::npos) << a;

  constexpr int calls = 8;
  std::vector<long> hits(calls);
  for (int i = 0; i < calls; ++i)
    cppless::dispatch(instance, [](std::uint64_t seed) { return lease_test::pi_hits(seed, 10'000); }, hits[i], std::uint64_t(7 + i));
  cppless::wait(instance, calls);
  for (int i = 0; i < calls; ++i) EXPECT_EQ(hits[i], lease_test::pi_hits(7 + i, 10'000));

  std::vector<long> counts(8);
  for (int col = 0; col < 8; ++col)
    cppless::dispatch(instance, [](int c) { return lease_test::queens_first_col(8, c); }, counts[col], col);
  cppless::wait(instance, 8);
  long total = 0;
  for (long c : counts) total += c;
  EXPECT_EQ(total, 92);
  EXPECT_EQ(instance.usage().calls, 16u);
}

}  // namespace
