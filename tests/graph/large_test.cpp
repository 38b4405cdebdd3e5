// A 10,000-node graph: layers of tasks, each reading two nodes of the layer before.
#include "common.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <vector>

namespace {

using graph_test::dispatcher;

TEST(GraphLarge, TenThousandNodes) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  // 1 start + 100 tasks + 50 layers of (100 joins + 100 tasks) + the gather and its task: 10,103 nodes.
  constexpr int width = 100, depth = 51;
  const auto t0 = std::chrono::steady_clock::now();
  auto s = cppless::schedule(builder);
  std::vector<cppless::graph::sender<long>> layer;
  for (long i = 0; i < width; ++i) layer.push_back(cppless::then(s, [i] { return i; }));
  for (int d = 1; d < depth; ++d) {
    std::vector<cppless::graph::sender<long>> next;
    for (int i = 0; i < width; ++i)
      next.push_back(cppless::then(cppless::when_all(layer[i], layer[(i + 1) % width]), [](long a, long b) { return a + b; }));
    layer = std::move(next);
  }
  // Fan-in of the last layer, so the sum checks every path.
  auto total = cppless::then(cppless::when_all(layer), [](const std::vector<long>& xs) {
    long sum = 0;
    for (long x : xs) sum += x;
    return sum;
  });
  auto f = total.future();
  layer.clear();
  const auto built = std::chrono::steady_clock::now();
  const auto summary = builder.await_all();
  const auto t1 = std::chrono::steady_clock::now();
  // Each layer doubles the sum of the previous one (every node is read twice).
  long expected = width * (width - 1) / 2;
  for (int d = 1; d < depth; ++d) expected *= 2;
  EXPECT_EQ(f.get(), expected);
  EXPECT_GE(summary.nodes, 10000u);
  EXPECT_EQ(summary.succeeded, summary.nodes);
  const double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  std::printf("[graph] %zu nodes (%zu calls) in %.0f ms (build %.0f ms): %.1f us per node, %.1f us per call\n",
              summary.nodes, summary.calls, us / 1000,
              std::chrono::duration<double, std::milli>(built - t0).count(), us / static_cast<double>(summary.nodes),
              us / static_cast<double>(summary.calls));
  EXPECT_LT(us, 60e6);
}

}  // namespace
