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
