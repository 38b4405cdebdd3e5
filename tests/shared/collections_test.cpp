// Crucial's other objects: list, atomic byte array, map iteration and snapshots, and namespaces
// that outlive a run (with an optional expiry). Also run on a cluster (shared_collections_test_on_cluster).
#include "redis_fixture.hpp"

#include <map>
#include <set>

using namespace std::chrono_literals;
namespace sh = cppless::shared;
using sh::testing::in_processes;
using sh::testing::shared_test;

TEST_F(shared_test, ListPushesPopsAndIndexes) {
  auto l = store_.list<std::string>("l");
  EXPECT_EQ(l.push_back("b"), 1);
  EXPECT_EQ(l.push_back("c"), 2);
  EXPECT_EQ(l.push_front("a"), 3);
  EXPECT_EQ(l.range(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(l.range(1, 1), (std::vector<std::string>{"b"}));
  EXPECT_EQ(l.get(0), "a");
  EXPECT_EQ(l.get(-1), "c");
  EXPECT_EQ(l.get(7), std::nullopt);
  l.set(1, "B");
  l.set(-1, "C");
  EXPECT_EQ(l.range(), (std::vector<std::string>{"a", "B", "C"}));
  EXPECT_THROW(l.set(3, "x"), sh::index_out_of_range);
  EXPECT_THROW(l.set(-4, "x"), sh::index_out_of_range);
  EXPECT_EQ(l.pop_front(), "a");
  EXPECT_EQ(l.pop_back(), "C");
  EXPECT_EQ(l.pop_back(), "B");
  EXPECT_EQ(l.pop_back(), std::nullopt);
  EXPECT_EQ(l.size(), 0);
  EXPECT_THROW(store_.list<int>("l"), sh::type_mismatch);
}

TEST_F(shared_test, ListPushesFromProcessesAreAllThere) {
  constexpr int procs = 4, items = 100;
  auto l = store_.list<int>("l");
  in_processes(procs, [&](int id) {
    for (int i = 0; i < items; ++i) (i % 2 ? l.push_back(id * 1000 + i) : l.push_front(id * 1000 + i));
    return std::string();
  });
  auto all = l.range();
  ASSERT_EQ(all.size(), static_cast<std::size_t>(procs * items));
  EXPECT_EQ(std::set<int>(all.begin(), all.end()).size(), all.size());  // each once
}

TEST_F(shared_test, ByteArrayAtomicOperations) {
  auto a = store_.byte_array("bytes", 8);
  EXPECT_EQ(a.size(), 8);
  EXPECT_EQ(a.get(7), 0);
  EXPECT_EQ(a.set(3, 200), 0);
  EXPECT_EQ(a.add(3, 100), 44);  // 300 mod 256
  EXPECT_EQ(a.add(3, -45), 255);
  std::uint8_t expected = 1;
  EXPECT_FALSE(a.compare_exchange(3, expected, 9));
  EXPECT_EQ(expected, 255);
  EXPECT_TRUE(a.compare_exchange(3, expected, 9));
  EXPECT_EQ(a.snapshot(), (std::vector<std::uint8_t>{0, 0, 0, 9, 0, 0, 0, 0}));
  EXPECT_THROW((void)a.get(8), sh::index_out_of_range);
  EXPECT_THROW(a.add(-1, 1), sh::index_out_of_range);
  EXPECT_THROW(store_.byte_array("bytes", 9), sh::type_mismatch);  // another size
  EXPECT_THROW(store_.byte_array("zero", 0), sh::invalid_argument);
}

TEST_F(shared_test, ByteArrayAddsFromProcessesAreExact) {
  constexpr int procs = 4, adds = 150;
  auto a = store_.byte_array("bytes", 4);
  in_processes(procs, [&](int) {
    for (int i = 0; i < adds; ++i) a.add(i % 4, 1);
    return std::string();
  });
  // Each process adds 38, 38, 37, 37 to bytes 0..3: x 4, below 256, no wrap.
  EXPECT_EQ(a.snapshot(), (std::vector<std::uint8_t>{152, 152, 148, 148}));
}

TEST_F(shared_test, MapSnapshotAndScanSeeEveryEntry) {
  auto m = store_.map<std::string, int>("m");
  std::map<std::string, int> want;
  for (int i = 0; i < 1000; ++i) {
    m.put("key" + std::to_string(i), i);
    want["key" + std::to_string(i)] = i;
  }
  auto snap = m.snapshot();
  EXPECT_EQ((std::map<std::string, int>(snap.begin(), snap.end())), want);
  std::map<std::string, int> seen;
  std::string cursor = "0";
  int pages = 0;
  do {
    auto page = m.scan(cursor, 50);
    for (auto& [k, v] : page.entries) seen[k] = v;
    cursor = page.cursor;
    ++pages;
  } while (cursor != "0" && pages < 1000);
  EXPECT_EQ(seen, want);
  EXPECT_GT(pages, 1);  // really iterated
}

TEST_F(shared_test, NamedNamespaceOutlivesItsStoreAndCanExpire) {
  const std::string ns = store_.ns();
  store_.counter("c").add(7);
  store_.list<int>("l").push_back(1);
  {
    auto later = sh::store::connect(sh::testing::target_url(), ns);  // another run joins it
    EXPECT_EQ(later.counter("c").get(), 7);
    EXPECT_GE(later.expire_namespace(60s), 2u);
  }
  const std::string key = store_.counter("c").ref().key();
  const long long ttl = std::stoll(sh::testing::admin_target({"PTTL", key}));
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 60'000);
  EXPECT_GE(store_.persist_namespace(), 2u);
  EXPECT_EQ(sh::testing::admin_target({"PTTL", key}), "-1");
  EXPECT_EQ(sh::testing::admin_target({"PTTL", store_.list<int>("l").ref().sub_key("l")}), "-1");  // the items too
  EXPECT_THROW(store_.expire_namespace(0ms), sh::invalid_argument);
}

namespace {

// A user-defined type: a vector of integers kept in the object's hash, with a server-side sum.
const sh::object_type vector_type{
    "intvec",
    {
        {"push", "local n = redis.call('HINCRBY', K, 'n', 1) redis.call('HSET', K, 'i' .. n, ARGS[1]) return n"},
        {"sum",
         "local s = 0 for i = 1, tonumber(redis.call('HGET', K, 'n') or '0') do s = s + tonumber(redis.call('HGET', K, 'i' .. i)) end "
         "return s",
         false},
        // Writes, then raises half-way: the write must not stay.
        {"broken", "redis.call('HSET', K, 'n', 999) error('deliberately broken')"},
        {"name", "return 'vector of ' .. (redis.call('HGET', K, 'n') or '0')", false},
    }};

}  // namespace

TEST_F(shared_test, UserDefinedOperationsRunInRedisExactlyOnce) {
  store_.define(vector_type);
  auto v = store_.custom("intvec", "v");
  EXPECT_EQ(v.call<std::int64_t>("push", 5), 1);
  EXPECT_EQ(v.call<std::int64_t>("push", 7), 2);
  EXPECT_EQ(v.call<std::int64_t>("sum"), 12);
  EXPECT_EQ(v.call("name"), "vector of 2");
  // From processes: every push counted once.
  in_processes(4, [&](int id) {
    for (int i = 0; i < 25; ++i) v.call<std::int64_t>("push", id);
    return std::string();
  });
  EXPECT_EQ(v.call<std::int64_t>("sum"), 12 + 25 * (0 + 1 + 2 + 3));
  // A raising body: a typed error naming the object, and nothing half-written.
  try {
    v.call("broken");
    FAIL() << "a raising operation succeeded";
  } catch (const sh::operation_error& e) {
    EXPECT_NE(std::string(e.what()).find("deliberately broken"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'v'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(v.call("name"), "vector of 102");
  // Another kind of object under the name, or an unknown operation: typed errors.
  EXPECT_THROW(store_.counter("v"), sh::type_mismatch);
  EXPECT_THROW(v.call("missing"), sh::operation_error);
}

TEST_F(shared_test, UserOperationsThatDoNotLoadAreTypedErrors) {
  EXPECT_THROW(store_.define(sh::object_type{"bad", {{"op", "this is not lua"}}}), sh::operation_error);
  EXPECT_THROW(store_.define(sh::object_type{"bad name", {{"op", "return 1"}}}), sh::invalid_argument);
  EXPECT_THROW(store_.define(sh::object_type{"empty", {}}), sh::invalid_argument);
  // A type never defined on this server.
  auto o = store_.custom("never_defined", "o");
  EXPECT_THROW(o.call("op"), sh::operation_error);
}
