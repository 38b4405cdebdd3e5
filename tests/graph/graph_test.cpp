// The graph API end to end on the local backend: values, ordering, fan-out/fan-in, dynamic growth.
#include "common.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using graph_test::dispatcher;
using graph_test::now_ns;
using span_ns = std::pair<std::int64_t, std::int64_t>;  // [start, end] inside the worker

span_ns timed(int sleep_ms) {
  const auto start = now_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  return span_ns{start, now_ns()};
}

TEST(Graph, IssueExample) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto a = cppless::schedule(builder);
  auto b = cppless::then(a, [] { return 12; });
  auto c = cppless::then(b, [](int m) { return m + 1; });
  auto d = cppless::then(cppless::when_all(b, c), [](int x, int y) { return x * y; });
  auto f = d.future();
  const auto totals = builder.await_all();
  EXPECT_EQ(f.get(), 156);
  EXPECT_EQ(f.get(), 156);  // decodes again: a graph future can be read any number of times
  EXPECT_EQ(totals.calls, 3u);
  EXPECT_EQ(totals.nodes, 5u);  // schedule, three tasks, one when_all
  EXPECT_EQ(totals.succeeded, 5u);
  EXPECT_EQ(totals.failed, 0u);
  EXPECT_GT(f.stats().worker, 0);
}

TEST(Graph, ThesisSpelling) {  // section 3.3: c->future(), f.value()
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto a = cppless::schedule(builder);
  auto b = cppless::then(a, []() { return 12; });
  auto c = cppless::then(b, [](int m) { return m + 1; });
  auto f = c->future();
  builder.await_all();
  EXPECT_EQ(f.value(), 13);
}

TEST(Graph, FutureGetDrivesWithoutAwaitAll) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto s = cppless::then(cppless::schedule(builder), [] { return std::string("graph"); });
  auto t = cppless::then(s, [](const std::string& x) { return x + "!"; });
  EXPECT_EQ(t.future().get(), "graph!");
  EXPECT_TRUE(s.future().ready());
  builder.await_all();
}

TEST(Graph, CapturesArgumentsVoidAndTupleValues) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  const std::vector<int> base{1, 2, 3};
  const std::string tag = "sum";
  auto start = cppless::schedule(builder);
  auto v = cppless::then(start, [base] { return base; });
  auto nothing = cppless::then(start, [] {});  // sender<>: contributes no argument
  auto tagged = cppless::then(cppless::when_all(v, nothing), [tag](const std::vector<int>& xs) {
    return std::make_pair(tag, std::accumulate(xs.begin(), xs.end(), 0));
  });
  auto pair_and_more = cppless::when_all(tagged, v, cppless::then(v, [](std::vector<int> xs) { return xs.size(); }));
  auto all = pair_and_more.future();  // graph::future<std::tuple<std::pair<...>, std::vector<int>, size_t>>
  auto returned_tuple = cppless::then(start, [] { return std::make_tuple(1, 2.5); }).future();
  auto void_future = nothing.future();
  builder.await_all();
  auto [p, xs, n] = all.get();
  EXPECT_EQ(p.first, "sum");
  EXPECT_EQ(p.second, 6);
  EXPECT_EQ(xs, base);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(returned_tuple.get(), std::make_tuple(1, 2.5));  // a task's tuple is one value
  void_future.get();
}

TEST(Graph, PerNodeConfigIsItsOwnFunction) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  using big = cppless::config<cppless::with_memory<2048>, cppless::with_timeout<60>>;
  auto fn = [](int x) { return x + 1; };
  auto a = cppless::then(cppless::schedule(builder), [] { return 1; });
  auto b = cppless::then<big>(a, fn);
  auto c = cppless::then(a, fn);
  auto bf = b.future(), cf = c.future();
  builder.await_all();
  EXPECT_EQ(bf.get(), 2);
  EXPECT_EQ(cf.get(), 2);
  const auto* be = builder.core().node(b.id()).function;
  const auto* ce = builder.core().node(c.id()).function;
  EXPECT_NE(be->id_hash, ce->id_hash);
  EXPECT_EQ(be->config.memory_mb, 2048u);
  EXPECT_EQ(be->config.timeout_s, 60u);
}

TEST(Graph, SuccessorsStartAfterTheirInputsEnded) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto root = cppless::then(cppless::schedule(builder), [] { return timed(30); });
  auto left = cppless::then(root, [](span_ns) { return timed(40); });
  auto right = cppless::then(root, [](span_ns) { return timed(10); });
  auto sink = cppless::then(cppless::when_all(left, right), [](span_ns, span_ns) { return timed(1); });
  auto fr = root.future(), fl = left.future(), fright = right.future(), fs = sink.future();
  builder.await_all();
  EXPECT_GE(fl.get().first, fr.get().second);
  EXPECT_GE(fright.get().first, fr.get().second);
  EXPECT_GE(fs.get().first, fl.get().second);
  EXPECT_GE(fs.get().first, fright.get().second);
  // Host-side stats agree: the sink was dispatched after both branches returned.
  EXPECT_GE(fs.stats().round_trip.count(), 0);
}

TEST(Graph, ValuesArriveInArgumentOrder) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto s = cppless::schedule(builder);
  auto chain = cppless::then(s, [] { return std::string("a"); });
  for (char ch = 'b'; ch <= 'k'; ++ch) chain = cppless::then(chain, [ch](std::string x) { return x + ch; });
  auto x = cppless::then(s, [] { return 1; });
  auto y = cppless::then(s, [] { return 2; });
  auto z = cppless::then(s, [] { return 3; });
  auto ordered = cppless::then(cppless::when_all(z, x, y), [](int p, int q, int r) { return p * 100 + q * 10 + r; });
  auto nested = cppless::when_all(cppless::when_all(x, y), z, chain);  // flattens to (int, int, int, string)
  auto fc = chain.future();
  auto fo = ordered.future();
  auto fn = nested.future();
  builder.await_all();
  EXPECT_EQ(fc.get(), "abcdefghijk");
  EXPECT_EQ(fo.get(), 312);
  EXPECT_EQ(fn.get(), std::make_tuple(1, 2, 3, std::string("abcdefghijk")));
}

TEST(Graph, IndependentNodesRunConcurrently) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto s = cppless::schedule(builder);
  auto sleeper = [] {
    const auto start = now_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return span_ns{start, now_ns()};
  };
  auto a = cppless::then(s, sleeper).future();
  auto b = cppless::then(s, sleeper).future();
  builder.await_all();
  const auto [a0, a1] = a.get();
  const auto [b0, b1] = b.get();
  EXPECT_LT(std::max(a0, b0), std::min(a1, b1)) << "the two independent nodes did not overlap";
  EXPECT_NE(a.stats().worker, b.stats().worker);
}

TEST(Graph, MaxInFlightCapsConcurrency) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance, cppless::graph::host_controller_options{.max_in_flight = 1});
  auto s = cppless::schedule(builder);
  std::vector<cppless::graph::future<span_ns>> spans;
  for (int i = 0; i < 4; ++i)
    spans.push_back(cppless::then(s, [] {
                      const auto start = now_ns();
                      std::this_thread::sleep_for(std::chrono::milliseconds(20));
                      return span_ns{start, now_ns()};
                    }).future());
  builder.await_all();
  std::vector<span_ns> v;
  for (auto& f : spans) v.push_back(f.get());
  std::sort(v.begin(), v.end());
  for (std::size_t i = 1; i < v.size(); ++i) EXPECT_GE(v[i].first, v[i - 1].second);
}

TEST(Graph, FanOutFanIn) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto s = cppless::schedule(builder);
  auto base = cppless::then(s, [] { return 3L; });
  std::vector<cppless::graph::sender<long>> squares;
  for (long i = 0; i < 64; ++i) squares.push_back(cppless::then(base, [i](long b) { return (i + b) * (i + b); }));
  auto gathered = cppless::when_all(squares);  // sender<std::vector<long>>
  auto total = cppless::then(gathered, [](const std::vector<long>& xs) { return std::accumulate(xs.begin(), xs.end(), 0L); });
  // A barrier over void senders, then a second level of fan-in by a static when_all.
  std::vector<cppless::graph::sender<>> voids;
  for (int i = 0; i < 8; ++i) voids.push_back(cppless::then(s, [] {}));
  auto after = cppless::then(cppless::when_all(voids), [] { return 7L; });
  auto both = cppless::then(cppless::when_all(total, after), [](long t, long k) { return t + k; });
  auto fg = gathered.future();
  auto fb = both.future();
  builder.await_all();
  long expected = 0;
  std::vector<long> expected_squares;
  for (long i = 0; i < 64; ++i) {
    expected_squares.push_back((i + 3) * (i + 3));
    expected += (i + 3) * (i + 3);
  }
  EXPECT_EQ(fg.get(), expected_squares);  // in the order given, whatever order they ended in
  EXPECT_EQ(fb.get(), expected + 7);
}

// Dynamic growth from a callback: each result decides whether the graph goes on.
TEST(Graph, GrowsFromOnReadyCallbacks) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  int steps = 0;
  std::vector<long> seen;
  // The node's value decides what comes next: Collatz from 27 takes 111 steps.
  std::function<void(cppless::graph::sender<long>)> follow = [&](cppless::graph::sender<long> node) {
    node.future().on_ready([&, node](cppless::graph::future<long> f) {
      const long n = f.get();
      seen.push_back(n);
      if (n == 1) return;
      ++steps;
      follow(cppless::then(node, [](long x) { return x % 2 ? 3 * x + 1 : x / 2; }));
    });
  };
  follow(cppless::then(cppless::schedule(builder), [] { return 27L; }));
  const auto totals = builder.await_all();  // runs the callbacks and the nodes they add
  EXPECT_EQ(steps, 111);
  EXPECT_EQ(seen.back(), 1);
  EXPECT_EQ(totals.calls, 112u);
  EXPECT_EQ(builder.unended(), 0u);
}

TEST(Graph, GrowsBetweenAwaits) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto frontier = cppless::then(cppless::schedule(builder), [] { return 1; });
  int rounds = 0;
  while (true) {
    builder.await_all();
    const int v = frontier.future().get();
    if (v >= 1000) break;
    ++rounds;
    // Decide on the host how wide the next round is.
    std::vector<cppless::graph::sender<int>> parts;
    for (int i = 0; i < (v % 3) + 2; ++i) parts.push_back(cppless::then(frontier, [](int x) { return x; }));
    frontier = cppless::then(cppless::when_all(parts), [](const std::vector<int>& xs) {
      return std::accumulate(xs.begin(), xs.end(), 0);
    });
  }
  EXPECT_EQ(frontier.future().get() >= 1000, true);
  EXPECT_GT(rounds, 3);
}

TEST(Graph, JoinsOfFinishedNodesKeepTheirValues) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto b = cppless::then(cppless::schedule(builder), [] { return 2; });
  auto c = cppless::then(b, [](int x) { return x + 1; });
  builder.await_all();
  // The join ends the moment it is added (its inputs are done); its value must survive until
  // the sender for it exists.
  auto product = cppless::then(cppless::when_all(b, c), [](int x, int y) { return x * y; });
  auto gathered = cppless::then(cppless::when_all(std::vector{b, c}), [](const std::vector<int>& v) { return v.size(); });
  EXPECT_EQ(product.future().get(), 6);
  EXPECT_EQ(gathered.future().get(), 2u);
  EXPECT_EQ(cppless::when_all(b, c).future().get(), std::make_tuple(2, 3));
  builder.await_all();
}

TEST(Graph, NodesAddedToARunningGraphStartWhileItRuns) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto slow = cppless::then(cppless::schedule(builder), [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return 5;
  });
  auto first = slow.future();
  EXPECT_FALSE(first.ready());
  auto doubled = cppless::then(slow, [](int x) { return 2 * x; });  // added while slow runs
  EXPECT_EQ(doubled.future().get(), 10);
  builder.await_all();
}

TEST(Graph, ValuesLeaveTheHostWhenNothingCanReadThem) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  cppless::graph::node_id inner_id;
  cppless::graph::sender<std::vector<int>> kept;
  {
    auto inner = cppless::then(cppless::schedule(builder), [] { return std::vector<int>(1000, 1); });
    inner_id = inner.id();
    kept = cppless::then(inner, [](std::vector<int> v) { return v; });
  }
  builder.await_all();
  EXPECT_TRUE(builder.core().node(inner_id).value.empty());    // no handle, successor started
  EXPECT_FALSE(builder.core().node(kept.id()).value.empty());  // a live sender may still read it
  EXPECT_EQ(kept.future().get().size(), 1000u);
}

// A node's function may run a graph of its own: inside a worker, the local dispatcher sends the
// inner nodes back to the host's pool (recursive offload), so graphs compose.
int inner_graph(int x) {
  cppless::local_dispatcher d;
  auto inst = d.create_instance();
  cppless::graph::builder inner(inst);
  auto s = cppless::schedule(inner);
  auto a = cppless::then(s, [x] { return x * 2; });
  auto b = cppless::then(s, [x] { return x + 100; });
  auto sum = cppless::then(cppless::when_all(a, b), [](int p, int q) { return p + q; });
  inner.await_all();
  return sum.future().get();
}

TEST(Graph, ANodeMayRunAGraphOfItsOwn) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto s = cppless::schedule(builder);
  auto outer = cppless::then(cppless::then(s, [] { return 5; }), [](int x) { return inner_graph(x); });
  EXPECT_EQ(outer.future().get(), 5 * 2 + 5 + 100);
  builder.await_all();
}

TEST(Graph, CaptureErrorsAreRaisedByThen) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto s = cppless::schedule(builder);
  int local = 3;
  EXPECT_THROW(cppless::then(s, [&local] { return local; }), cppless::capture_error);
  EXPECT_EQ(builder.size(), 1u);  // nothing was added
  builder.await_all();
}

TEST(Graph, SendersOfDifferentBuildersDoNotMix) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder one(instance), two(instance);
  auto a = cppless::then(cppless::schedule(one), [] { return 1; });
  auto b = cppless::then(cppless::schedule(two), [] { return 2; });
  EXPECT_THROW(cppless::when_all(a, b), cppless::error);
  EXPECT_THROW(cppless::when_all(std::vector{a, b}), cppless::error);
  one.await_all();
  two.await_all();
}

}  // namespace
