// Test support: one private redis-server per test binary (started on first use, stopped at exit),
// a fresh namespace per test, and running code in forked worker processes.
#pragma once

#include <cppless/shared.hpp>
#include <cppless/testing/local_redis.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace cppless::shared::testing {

// The binary's server (started on first use; stopped by its destructor at exit).
cppless::testing::local_redis& server();

// The tests of shared_test run against the binary's server, or, when CPPLESS_TEST_CLUSTER=1 (ctest
// runs the object and concurrency tests both ways), against a private Redis Cluster of 3 masters
// with a replica each: the same code, the same checks.
bool on_cluster();
std::string target_url();
// A raw command on the target: on a cluster, sent to the node that serves its key (MOVED followed).
std::string admin_target(const std::vector<std::string>& argv);
// Clients blocked in BLPOP/BLMOVE on the target (summed over the cluster's nodes).
int blocked_clients_target();
// Keys matching a pattern on the target (all nodes).
long long count_keys(const std::string& pattern);

class shared_test : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  store store_;
};

// Runs body(i) for i in [0, n) in n forked processes at once; returns what each returned. A child
// that throws fails the calling test with the exception's message (children never use gtest).
std::vector<std::string> in_processes(int n, const std::function<std::string(int)>& body);

// A raw command on a fresh connection of its own (for CLIENT KILL, CONFIG, ACL, SET...). Error
// replies come back as their text.
std::string admin(const cppless::testing::local_redis& redis, const std::vector<std::string>& argv, const std::string& password = {});

// Waits until `condition` holds, looking every millisecond; false if it did not within `limit`.
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = std::chrono::seconds(10));

// Clients blocked in BLPOP/BLMOVE on the server (INFO clients: blocked_clients).
int blocked_clients(const cppless::testing::local_redis& redis);

}  // namespace cppless::shared::testing
