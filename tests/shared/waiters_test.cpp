// Waiting and bookkeeping: every wake-up reaches a waiter that can use it, a waiter is counted
// once however often its connection drops, and call records do not accumulate in the object.
#include "redis_fixture.hpp"

#include <atomic>
#include <thread>

using namespace std::chrono_literals;
namespace sh = cppless::shared;
using sh::testing::admin;
using sh::testing::blocked_clients;
using sh::testing::eventually;
using sh::testing::in_processes;
using sh::testing::server;
using sh::testing::shared_test;

TEST_F(shared_test, SemaphoreReleaseReachesTheWaiterItCanServe) {
  auto sem = store_.semaphore("sem", 0);
  const int base = blocked_clients(server());
  std::atomic<bool> big_done{false}, small_done{false};
  // First the waiter that needs 2, then the one that needs 1; a release of 1 must reach the
  // second (before, the first took the only wake-up, found too few permits and slept again).
  std::jthread big([&] {
    sem.acquire(2, 30s);
    big_done = true;
  });
  ASSERT_TRUE(eventually([&] { return blocked_clients(server()) == base + 1; }));
  std::jthread small([&] {
    sem.acquire(1, 30s);
    small_done = true;
  });
  ASSERT_TRUE(eventually([&] { return blocked_clients(server()) == base + 2; }));
  sem.release(1);
  // Within 10 s of a 30 s wait: woken, not timed out into a last attempt.
  EXPECT_TRUE(eventually([&] { return small_done.load(); }, 10s));
  EXPECT_FALSE(big_done);
  sem.release(2);
  EXPECT_TRUE(eventually([&] { return big_done.load(); }, 10s));
  small.join();
  big.join();
  EXPECT_EQ(sem.available(), 0);
}

TEST_F(shared_test, AWaiterIsCountedOnceAcrossDroppedConnections) {
  auto gate = store_.latch("gate", 1);
  auto sem = store_.semaphore("sem", 0);
  const std::string gate_waiters = gate.ref().sub_key("ws");
  const std::string sem_waiters = sem.ref().sub_key("ws");
  const int base = blocked_clients(server());
  std::jthread latch_waiter([&] { gate.wait(30s); });
  std::jthread sem_waiter([&] { sem.acquire(1, 30s); });
  ASSERT_TRUE(eventually([&] { return blocked_clients(server()) == base + 2; }));
  for (int i = 0; i < 3; ++i) {
    // Both waiters lose their connections, reconnect and register again.
    EXPECT_GE(std::stoi(admin(server(), {"CLIENT", "KILL", "TYPE", "normal"})), 2);
    ASSERT_TRUE(eventually([&] { return blocked_clients(server()) == base + 2; }));
  }
  EXPECT_EQ(admin(server(), {"SCARD", gate_waiters}), "1");
  EXPECT_EQ(admin(server(), {"SCARD", sem_waiters}), "1");
  gate.count_down();
  sem.release(1);
  latch_waiter.join();
  sem_waiter.join();
  EXPECT_EQ(admin(server(), {"EXISTS", gate_waiters}), "0");
  EXPECT_EQ(admin(server(), {"EXISTS", sem_waiters}), "0");
  EXPECT_EQ(sem.available(), 0);
}

TEST_F(shared_test, CallRecordsDoNotGrowTheObject) {
  auto c = store_.counter("c");
  const std::string key = c.ref().key();
  const std::string fields = admin(server(), {"HLEN", key});
  constexpr int clients = 12;
  in_processes(clients, [&](int) {
    c.add(1);  // a fresh process: a fresh client id
    return std::string();
  });
  EXPECT_EQ(c.get(), clients);
  EXPECT_EQ(admin(server(), {"HLEN", key}), fields);  // the object holds its state only
  // Each client's record is a key of its own that expires.
  const std::string count_records = R"lua(
local n, cursor = 0, '0'
repeat
  local r = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 1000)
  cursor = r[1]
  for _, k in ipairs(r[2]) do
    local ttl = redis.call('PTTL', k)
    if ttl <= 0 then return -1 end
    n = n + 1
  end
until cursor == '0'
return n
)lua";
  EXPECT_EQ(admin(server(), {"EVAL", count_records, "0", c.ref().sub_key("r") + "*"}), std::to_string(clients));
}
