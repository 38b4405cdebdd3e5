// Shared objects on a real local Redis Cluster: cluster mode found from any node, an object's keys
// in one slot, MOVED followed when a slot moves, a master killed (kill -9) mid-run with nothing
// lost or doubled, and the bad cases (a node that is in no cluster, a slot nobody serves).
// (The object and concurrency tests also run on a cluster: shared_*_test_on_cluster.)
#include "redis_fixture.hpp"

#include <cppless/testing/local_cluster.hpp>

#include <atomic>
#include <set>
#include <sstream>
#include <thread>

using namespace std::chrono_literals;
namespace sh = cppless::shared;
using cppless::testing::local_cluster;
using cppless::testing::local_redis;
using sh::testing::eventually;

namespace {

class settings_guard {
 public:
  settings_guard() : saved_(sh::process_settings()) {}
  ~settings_guard() { sh::process_settings() = saved_; }
  settings_guard(const settings_guard&) = delete;
  settings_guard& operator=(const settings_guard&) = delete;

 private:
  sh::settings saved_;
};

// The cluster most tests share (3 masters, a replica each).
local_cluster& shared_cluster() {
  static local_cluster c(local_cluster::options{.masters = 3, .replicas = 1});
  return c;
}

std::string url_of(const local_redis& node) { return "redis://127.0.0.1:" + std::to_string(node.port()); }

long long slot_of(int port, const std::string& key) { return std::stoll(local_cluster::command(port, {"CLUSTER", "KEYSLOT", key})); }

}  // namespace

TEST(shared_cluster, ObjectsWorkFromEveryNodeAndKeepTheirKeysInOneSlot) {
  settings_guard keep;
  sh::process_settings().retry_budget = 10s;
  auto& cluster = shared_cluster();
  const std::string ns = sh::store::fresh_namespace();
  // Every node, masters and replicas alike, can be the address a run is given.
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    auto store = sh::store::connect(url_of(cluster.node(i)), ns);
    EXPECT_EQ(store.counter("c").add(1), static_cast<std::int64_t>(i + 1));
  }
  auto store = sh::store::connect(cluster.url(), ns);
  auto q = store.queue<int>("q");
  q.push(1);
  q.push(2);
  auto sem = store.semaphore("sem", 0);
  std::jthread waiter([&] { sem.acquire(1, 20s); });
  ASSERT_TRUE(eventually([&] { return local_cluster::command(cluster.master_for(sem.ref().key()).port(), {"SCARD", sem.ref().sub_key("ws")}) == "1"; }));
  // The object, its call records, queue items and waiters: all in the object's slot.
  for (const auto* ref : {&q.ref(), &sem.ref()}) {
    auto& owner = cluster.master_for(ref->key());
    const long long slot = slot_of(owner.port(), ref->key());
    const std::string keys = local_cluster::command(owner.port(), {"EVAL", R"lua(
local out = {}
for _, k in ipairs(redis.call('KEYS', ARGV[1])) do out[#out + 1] = tostring(redis.call('CLUSTER', 'KEYSLOT', k)) end
return table.concat(out, ' ')
)lua", "0", ref->key() + "*"});
    std::set<std::string> slots;
    std::istringstream in(keys);
    int count = 0;
    for (std::string s; in >> s; ++count) slots.insert(s);
    EXPECT_GE(count, 2) << ref->key();  // the object and at least one auxiliary key
    EXPECT_EQ(slots, (std::set<std::string>{std::to_string(slot)})) << ref->key();
  }
  sem.release(1);
  waiter.join();
  EXPECT_EQ(q.pop(1s), 1);
  EXPECT_GE(store.remove_namespace(), 3u);
  EXPECT_EQ(sh::store::connect(cluster.url(), ns).queue<int>("q").size(), 0);
}

TEST(shared_cluster, MovedSlotIsFollowed) {
  settings_guard keep;
  sh::process_settings().retry_budget = 10s;
  auto& cluster = shared_cluster();
  auto store = sh::store::connect(cluster.url());
  auto c = store.counter("moving");
  EXPECT_EQ(c.add(5), 5);  // the client now knows the slot's master
  // Move the slot to another master by hand (what resharding does), keys included.
  const std::string key = c.ref().key();
  auto& from = cluster.master_for(key);
  const std::string slot = std::to_string(slot_of(from.port(), key));
  local_redis* to = nullptr;
  for (std::size_t i = 0; i < cluster.size() && to == nullptr; ++i) {
    auto& n = cluster.node(i);
    if (n.port() != from.port() && local_cluster::command(n.port(), {"INFO", "replication"}).find("role:master") != std::string::npos) to = &n;
  }
  ASSERT_NE(to, nullptr);
  const std::string from_id = local_cluster::command(from.port(), {"CLUSTER", "MYID"});
  const std::string to_id = local_cluster::command(to->port(), {"CLUSTER", "MYID"});
  ASSERT_EQ(local_cluster::command(to->port(), {"CLUSTER", "SETSLOT", slot, "IMPORTING", from_id}), "OK");
  ASSERT_EQ(local_cluster::command(from.port(), {"CLUSTER", "SETSLOT", slot, "MIGRATING", to_id}), "OK");
  ASSERT_EQ(local_cluster::command(from.port(), {"EVAL", R"lua(
local keys = redis.call('CLUSTER', 'GETKEYSINSLOT', ARGV[1], 1000)
return #keys
)lua", "0", slot}) != "0", true);
  // MIGRATE every key of the slot (from a script it is not allowed: one by one from here).
  for (int round = 0; round < 100; ++round) {
    const std::string k = local_cluster::command(from.port(), {"EVAL", "return redis.call('CLUSTER', 'GETKEYSINSLOT', ARGV[1], 1)[1] or ''", "0", slot});
    if (k.empty()) break;
    ASSERT_EQ(local_cluster::command(from.port(), {"MIGRATE", "127.0.0.1", std::to_string(to->port()), k, "0", "5000"}), "OK");
  }
  for (std::size_t i = 0; i < cluster.size(); ++i)
    local_cluster::command(cluster.node(i).port(), {"CLUSTER", "SETSLOT", slot, "NODE", to_id});
  ASSERT_TRUE(eventually([&] { return cluster.master_for(key).port() == to->port(); }));
  // The client still believes in the old master: MOVED, followed; the call applies once.
  EXPECT_EQ(c.add(1), 6);
  EXPECT_EQ(c.get(), 6);
  store.remove_namespace();
}

TEST(shared_cluster, MasterKilledMidRunLosesAndDoublesNoAdd) {
  settings_guard keep;
  sh::process_settings().retry_budget = 30s;  // outlasts the failover (node timeout 1 s)
  local_cluster cluster(local_cluster::options{.masters = 3, .replicas = 1, .node_timeout_ms = 1000});
  auto store = sh::store::connect(cluster.url());
  auto c = store.counter("c");
  constexpr int adders = 2;
  std::atomic<long> acknowledged{0};
  std::atomic<bool> stop{false}, failed{false};
  std::vector<std::string> failures(adders);
  std::vector<std::jthread> threads;
  for (int t = 0; t < adders; ++t)
    threads.emplace_back([&, t] {
      try {
        while (!stop) {
          c.add(1);
          ++acknowledged;
        }
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(t)] = e.what();
        failed = true;
      }
    });
  struct stop_on_exit {
    std::atomic<bool>& flag;
    ~stop_on_exit() { flag = true; }
  } stopper{stop};
  ASSERT_TRUE(eventually([&] { return acknowledged >= 300 || failed; }));
  local_redis& master = cluster.master_for(c.ref().key());
  master.kill();  // kill -9, mid-run: some add may be applied with its reply lost
  const long at_kill = acknowledged;
  EXPECT_TRUE(eventually([&] { return acknowledged >= at_kill + 300 || failed; }, 60s)) << "no progress after the failover";
  stop = true;
  for (auto& t : threads) t.join();
  for (const auto& f : failures) EXPECT_EQ(f, "");
  EXPECT_NE(cluster.master_for(c.ref().key()).port(), master.port());  // a replica took over
  EXPECT_EQ(c.get(), acknowledged.load());
}

TEST(shared_cluster, ANodeInNoClusterIsAClearError) {
  local_redis::options opts;
  opts.extra_args = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"};
  local_redis lonely(opts);
  try {
    sh::store::connect(url_of(lonely));
    FAIL() << "connected to a cluster node that serves no slots";
  } catch (const sh::server_error& e) {
    EXPECT_NE(std::string(e.what()).find("not (yet) a member of a cluster"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(lonely.port())), std::string::npos) << e.what();
  }
}

TEST(shared_cluster, ASlotNobodyServesIsAConnectionErrorNamingIt) {
  settings_guard keep;
  sh::process_settings().retry_budget = 10s;
  local_cluster single(local_cluster::options{.masters = 1, .replicas = 0});
  auto store = sh::store::connect(single.url());
  auto c = store.counter("c");
  c.add(1);
  const int port = single.node(0).port();
  ASSERT_EQ(local_cluster::command(port, {"CLUSTER", "DELSLOTS", std::to_string(slot_of(port, c.ref().key()))}), "OK");
  sh::process_settings().retry_budget = 500ms;
  try {
    c.add(1);
    FAIL() << "added to a slot nobody serves";
  } catch (const sh::outcome_unknown& e) {
    FAIL() << "the add was never applied, yet: " << e.what();
  } catch (const sh::connection_error& e) {
    EXPECT_NE(std::string(e.what()).find("CLUSTERDOWN"), std::string::npos) << e.what();
  }
}
