// Each object's semantics, from one process: values, edge cases, errors, and handles travelling
// through the cppless archive.
#include "redis_fixture.hpp"

#include <cppless/archive.hpp>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace std::chrono_literals;
namespace sh = cppless::shared;
using sh::testing::shared_test;

namespace {

struct point {
  int x = 0;
  std::string label;
  template <class A>
  void serialize(A& ar) {
    ar(x, label);
  }
  friend bool operator==(const point&, const point&) = default;
};

template <class T>
T round_trip(const T& handle) {
  cppless::byte_buffer bytes = cppless::to_bytes(handle);
  return cppless::from_bytes<T>(bytes.span());
}

}  // namespace

TEST_F(shared_test, CounterAddGetReset) {
  auto c = store_.counter("c");
  EXPECT_EQ(c.get(), 0);
  EXPECT_EQ(c.add(), 1);
  EXPECT_EQ(c.add(41), 42);
  EXPECT_EQ(c.add(-2), 40);
  EXPECT_EQ(c.reset(7), 40);
  EXPECT_EQ(c.get(), 7);
  // Opening again sees the same object; 64-bit values are exact.
  auto again = store_.counter("c");
  EXPECT_EQ(again.add(std::numeric_limits<std::int64_t>::max() - 7), std::numeric_limits<std::int64_t>::max());
  EXPECT_THROW(again.add(1), sh::server_error);  // overflow refused
  EXPECT_EQ(c.get(), std::numeric_limits<std::int64_t>::max());
}

TEST_F(shared_test, AtomicOfAnyType) {
  auto a = store_.atomic<point>("p", point{1, "one"});
  EXPECT_EQ(a.load(), (point{1, "one"}));
  a.store({2, "two"});
  EXPECT_EQ(a.exchange({3, "three"}), (point{2, "two"}));
  point expected{9, "nine"};
  EXPECT_FALSE(a.compare_exchange(expected, {4, "four"}));
  EXPECT_EQ(expected, (point{3, "three"}));  // loaded the current value
  EXPECT_TRUE(a.compare_exchange(expected, {4, "four"}));
  EXPECT_EQ(a.load(), (point{4, "four"}));
  // The initial value applies only on creation.
  EXPECT_EQ(store_.atomic<point>("p", point{}).load(), (point{4, "four"}));

  auto d = store_.atomic<double>("d", 0.1);
  EXPECT_EQ(d.load(), 0.1);
  d.store(std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isinf(d.load()));
  auto b = store_.atomic<bool>("b");
  EXPECT_FALSE(b.load());
  bool f = false;
  EXPECT_TRUE(b.compare_exchange(f, true));
  EXPECT_TRUE(b.load());
}

TEST_F(shared_test, BestMaximizeAndMinimize) {
  auto hi = store_.best<int, std::vector<int>>("hi", sh::maximize);
  EXPECT_EQ(hi.value(), std::numeric_limits<int>::lowest());
  EXPECT_FALSE(hi.payload().has_value());
  EXPECT_TRUE(hi.offer(10, {1, 2}));
  EXPECT_FALSE(hi.offer(10, {3}));  // not strictly better
  EXPECT_FALSE(hi.offer(-5, {4}));
  EXPECT_TRUE(hi.offer(11, {5, 6, 7}));
  auto s = hi.get();
  EXPECT_EQ(s.value, 11);
  EXPECT_EQ(s.payload, (std::vector<int>{5, 6, 7}));

  auto lo = store_.best<double, std::string>("lo", sh::minimize);
  EXPECT_EQ(lo.value(), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(lo.offer(2.5, "a"));
  EXPECT_TRUE(lo.offer(-1e300, "b"));
  EXPECT_FALSE(lo.offer(0.0, "c"));
  EXPECT_FALSE(lo.offer(std::nan(""), "nan never improves"));
  EXPECT_EQ(lo.value(), -1e300);
  EXPECT_EQ(lo.payload(), "b");

  // Large integers compare exactly (not as doubles): 2^53 + 1 > 2^53.
  auto big = store_.best<std::int64_t, int>("big", sh::maximize);
  EXPECT_TRUE(big.offer(std::int64_t{1} << 53, 1));
  EXPECT_TRUE(big.offer((std::int64_t{1} << 53) + 1, 2));
  EXPECT_FALSE(big.offer(std::int64_t{1} << 53, 3));
  EXPECT_TRUE(big.offer(std::numeric_limits<std::int64_t>::max(), 4));
  EXPECT_EQ(big.value(), std::numeric_limits<std::int64_t>::max());
  auto neg = store_.best<std::int64_t, int>("neg", sh::minimize);
  EXPECT_TRUE(neg.offer(-9, 1));
  EXPECT_TRUE(neg.offer(-10, 2));
  EXPECT_FALSE(neg.offer(-9, 3));
  EXPECT_TRUE(neg.offer(std::numeric_limits<std::int64_t>::min(), 4));
  EXPECT_EQ(neg.payload(), 4);

  // The same name opened with the other goal is another kind of object.
  EXPECT_THROW((store_.best<int, std::vector<int>>("hi", sh::minimize)), sh::type_mismatch);
}

TEST_F(shared_test, FutureSetOnceGetWithTimeout) {
  auto f = store_.write_once<std::string>("f");
  EXPECT_FALSE(f.ready());
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(f.get(150ms), sh::wait_timeout);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 140ms);
  f.set("value");
  EXPECT_TRUE(f.ready());
  EXPECT_EQ(f.get(), "value");
  EXPECT_EQ(f.try_get(), "value");
  try {
    f.set("again");
    FAIL() << "second set accepted";
  } catch (const sh::already_set& e) {
    EXPECT_NE(std::string(e.what()).find("'f'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.get(), "value");
}

TEST_F(shared_test, MapGetPutMerge) {
  auto m = store_.map<std::string, std::int64_t>("m");
  EXPECT_FALSE(m.get("a").has_value());
  EXPECT_TRUE(m.put("a", 1));
  EXPECT_FALSE(m.put("a", 2));
  EXPECT_EQ(m.get("a"), 2);
  EXPECT_EQ(m.merge("a", 5, sh::merge_op::add), 7);
  EXPECT_EQ(m.merge("b", 5, sh::merge_op::min), 5);  // absent: becomes the operand
  EXPECT_EQ(m.merge("b", 3, sh::merge_op::min), 3);
  EXPECT_EQ(m.merge("b", 4, sh::merge_op::min), 3);
  EXPECT_EQ(m.merge("b", 9, sh::merge_op::max), 9);
  EXPECT_EQ(m.size(), 2);
  EXPECT_TRUE(m.erase("a"));
  EXPECT_FALSE(m.erase("a"));
  EXPECT_EQ(m.size(), 1);
  EXPECT_FALSE(m.get("a").has_value());

  auto small = store_.map<int, std::int8_t>("small");
  EXPECT_EQ(small.merge(1, 100, sh::merge_op::add), 100);
  EXPECT_THROW(small.merge(1, 100, sh::merge_op::add), sh::server_error);  // would leave int8
  EXPECT_EQ(small.get(1), 100);                                           // nothing changed

  // Beyond 2^53, where doubles stop being exact: adds and comparisons stay exact.
  constexpr std::int64_t big = std::int64_t{1} << 53, top = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(m.merge("big", big, sh::merge_op::add), big);
  EXPECT_EQ(m.merge("big", 1, sh::merge_op::add), big + 1);
  EXPECT_EQ(m.merge("big", big, sh::merge_op::max), big + 1);
  EXPECT_EQ(m.merge("big", big + 2, sh::merge_op::max), big + 2);
  EXPECT_EQ(m.merge("big", big + 1, sh::merge_op::min), big + 1);
  m.put("top", top - 5);
  EXPECT_EQ(m.merge("top", 5, sh::merge_op::add), top);
  EXPECT_THROW(m.merge("top", 1, sh::merge_op::add), sh::server_error);
  EXPECT_EQ(m.get("top"), top);
  EXPECT_EQ(m.merge("neg", std::numeric_limits<std::int64_t>::min(), sh::merge_op::min), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(m.merge("neg", -big - 1, sh::merge_op::min), std::numeric_limits<std::int64_t>::min());

  auto d = store_.map<point, double>("d");
  EXPECT_DOUBLE_EQ(d.merge({1, "x"}, 0.5, sh::merge_op::add), 0.5);
  EXPECT_DOUBLE_EQ(d.merge({1, "x"}, 0.25, sh::merge_op::add), 0.75);
  EXPECT_FALSE(d.get({1, "y"}).has_value());
}

TEST_F(shared_test, QueueFifoAndTimeout) {
  auto q = store_.queue<point>("q");
  EXPECT_EQ(q.push({1, "a"}), 1);
  EXPECT_EQ(q.push({2, "b"}), 2);
  EXPECT_EQ(q.size(), 2);
  EXPECT_EQ(q.pop(), (point{1, "a"}));
  EXPECT_EQ(q.try_pop(), (point{2, "b"}));
  EXPECT_FALSE(q.try_pop().has_value());
  EXPECT_FALSE(q.pop_for(50ms).has_value());
  EXPECT_THROW(q.pop(50ms), sh::wait_timeout);
}

TEST_F(shared_test, LatchAndSemaphoreSingleProcess) {
  auto l = store_.latch("l", 2);
  EXPECT_FALSE(l.try_wait());
  EXPECT_THROW(l.wait(50ms), sh::wait_timeout);
  EXPECT_EQ(l.count_down(), 1);
  EXPECT_EQ(l.count_down(5), 0);  // stops at zero
  l.wait();
  EXPECT_TRUE(l.try_wait());
  EXPECT_EQ(store_.latch("zero", 0).count(), 0);

  auto s = store_.semaphore("s", 2);
  EXPECT_TRUE(s.try_acquire(2));
  EXPECT_FALSE(s.try_acquire());
  EXPECT_THROW(s.acquire(1, 50ms), sh::wait_timeout);
  EXPECT_EQ(s.release(3), 3);
  s.acquire(3);
  EXPECT_EQ(s.available(), 0);
  EXPECT_THROW(s.acquire(0), sh::invalid_argument);
}

TEST_F(shared_test, BarrierOfOneAndTimeoutWithdraws) {
  auto one = store_.barrier("one", 1);
  EXPECT_EQ(one.arrive_and_wait(), 0);
  EXPECT_EQ(one.arrive_and_wait(), 1);
  auto two = store_.barrier("two", 2);
  auto start = std::chrono::steady_clock::now();
  try {
    two.arrive_and_wait(200ms);
    FAIL() << "a lone party passed a barrier of two";
  } catch (const sh::wait_timeout& e) {
    EXPECT_NE(std::string(e.what()).find("withdrawn"), std::string::npos) << e.what();
  }
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 190ms);
  EXPECT_LT(took, 2s);
  // Withdrawn: a second lone arrival must wait again, not pass with the first one's arrival.
  EXPECT_THROW(two.arrive_and_wait(100ms), sh::wait_timeout);
}

TEST_F(shared_test, WrongTypeIsAnErrorNeverAMisread) {
  store_.counter("x").add(5);
  EXPECT_THROW(store_.atomic<std::int64_t>("x"), sh::type_mismatch);
  EXPECT_THROW((store_.map<int, int>("x")), sh::type_mismatch);
  store_.atomic<int>("i", 5);
  try {
    store_.atomic<std::string>("i");
    FAIL() << "atomic<int> opened as atomic<std::string>";
  } catch (const sh::type_mismatch& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("atomic<int>"), std::string::npos) << what;
    EXPECT_NE(what.find(store_.ns()), std::string::npos) << what;
  }
  EXPECT_THROW(store_.queue<std::string>("i"), sh::type_mismatch);
  EXPECT_THROW((store_.best<long, int>("i", sh::maximize)), sh::type_mismatch);
  store_.barrier("b", 3);
  EXPECT_THROW(store_.barrier("b", 4), sh::type_mismatch);
  EXPECT_NO_THROW(store_.barrier("b", 3));

  // A handle whose object was replaced by another kind: the operation refuses to read it.
  auto a = store_.atomic<int>("swap", 1);
  store_.remove_namespace();
  EXPECT_THROW(a.load(), sh::missing_object);
  store_.atomic<std::string>("swap", "text");
  EXPECT_THROW(a.load(), sh::type_mismatch);

  // A key cppless did not write.
  // The key an object named "raw" would have: the same namespace and name.
  const std::string raw_key = sh::detail::object_ref{store_.where(), store_.ns(), "raw"}.key();
  const std::string rawhash_key = sh::detail::object_ref{store_.where(), store_.ns(), "rawhash"}.key();
  sh::testing::admin_target({"SET", raw_key, "hello"});
  EXPECT_THROW(store_.counter("raw"), sh::type_mismatch);
  sh::testing::admin_target({"HSET", rawhash_key, "v", "1"});
  EXPECT_THROW(store_.counter("rawhash"), sh::type_mismatch);
}

TEST_F(shared_test, QueueItemsOfAnotherTypeAreRefused) {
  // Two handles of different element types on one name can only exist if the object was
  // replaced; the items carry their type, so the pop refuses instead of misreading.
  auto ints = store_.queue<int>("q");
  ints.push(7);
  auto key = ints.ref().key();
  sh::testing::admin_target({"HSET", key, "_k", sh::queue<std::string>::kind().kind});
  auto strings = store_.queue<std::string>("q");
  EXPECT_THROW(strings.pop(100ms), sh::type_mismatch);
}

TEST_F(shared_test, NamesAreChecked) {
  EXPECT_THROW(store_.counter(""), sh::invalid_argument);
  EXPECT_THROW(store_.counter(std::string("a\nb")), sh::invalid_argument);
  EXPECT_THROW(store_.counter(std::string(2000, 'x')), sh::invalid_argument);
  EXPECT_THROW(sh::store::connect(sh::testing::target_url(), "ns*"), sh::invalid_argument);
  EXPECT_THROW(sh::store::connect(sh::testing::target_url(), "ns{a}"), sh::invalid_argument);  // would break hash tags
  EXPECT_NO_THROW(store_.counter("with:colons and spaces/ünïcode"));
  sh::store unbound;
  EXPECT_THROW(unbound.counter("x"), sh::invalid_argument);
}

TEST_F(shared_test, HandlesTravelThroughTheArchive) {
  auto c = round_trip(store_.counter("c"));
  EXPECT_EQ(c.add(3), 3);
  auto b = round_trip(store_.best<int, std::string>("b", sh::minimize));
  EXPECT_TRUE(b.offer(4, "four"));
  EXPECT_EQ(b.goal(), sh::minimize);
  auto bar = round_trip(store_.barrier("bar", 1));
  EXPECT_EQ(bar.parties(), 1);
  EXPECT_EQ(bar.arrive_and_wait(), 0);
  auto s = round_trip(store_);
  EXPECT_EQ(s.ns(), store_.ns());
  EXPECT_EQ(s.counter("c").get(), 3);
}

TEST_F(shared_test, RemoveNamespaceRemovesEverything) {
  auto other = sh::store::connect(sh::testing::target_url());
  other.counter("keep").add(1);
  store_.counter("c").add(1);
  store_.queue<int>("q").push(1);
  store_.map<int, int>("m").put(1, 1);
  auto f = store_.write_once<int>("f");
  f.set(1);
  EXPECT_GE(store_.remove_namespace(), 5u);
  EXPECT_EQ(sh::testing::count_keys("{" + store_.ns() + ":*"), 0);
  EXPECT_EQ(other.counter("keep").get(), 1);  // another run's namespace is untouched
  other.remove_namespace();
}

TEST(shared_url, ParsesAndHidesPasswords) {
  auto ep = sh::parse_url("redis://alice:s3cret@example.org:6380/2");
  EXPECT_EQ(ep.where.host, "example.org");
  EXPECT_EQ(ep.where.port, 6380);
  EXPECT_EQ(ep.where.db, 2);
  EXPECT_EQ(ep.where.user, "alice");
  EXPECT_EQ(ep.password, "s3cret");
  EXPECT_EQ(ep.where.to_string(), "alice@example.org:6380/2");
  auto def = sh::parse_url("redis://:pw@localhost");
  EXPECT_EQ(def.where.port, 6379);
  EXPECT_EQ(def.password, "pw");
  EXPECT_TRUE(def.where.user.empty());
  try {
    (void)sh::parse_url("redis://:topsecret@host:notaport");
    FAIL();
  } catch (const sh::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).find("topsecret"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)sh::parse_url("http://host"), sh::invalid_argument);
  EXPECT_THROW((void)sh::parse_url("redis://"), sh::invalid_argument);
}
