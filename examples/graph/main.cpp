// Two real computations shaped as task graphs, each checked against a serial run on the host.
//
// matmul (default): C = A x B in blocks. For every block C(i,j) the products A(i,k) x B(k,j)
// run on workers (one node each, the two input blocks captured by value), and one node per
// C(i,j) adds its partial products as soon as they are done (when_all over a vector of senders).
//
//   A(i,k) x B(k,j)  ...  (nb^3 product nodes, all independent)
//          \   |   /
//          sum C(i,j)     (nb^2 nodes, each waiting for its own nb products only)
//
// sort: a merge-sort tree. Leaves sort slices, every inner node merges its two children
// (when_all + then) and starts as soon as its own children are done, not the whole level.
//
//   graph_example [--kind matmul|sort] [--n 384] [--blocks 3] [--leaves 16] [--seed 7]
#include <cppless/cppless.hpp>
#include <cppless/graph.hpp>

#include "../common/args.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

using ms = std::chrono::duration<double, std::milli>;
using clock_type = std::chrono::steady_clock;

// --- blocked matrix multiply ---------------------------------------------------------------------

// A square block, row-major.
struct block {
  int size = 0;
  std::vector<double> v;
  template <class A>
  void serialize(A& ar) {
    ar(size, v);
  }
  double& at(int r, int c) { return v[static_cast<std::size_t>(r) * size + c]; }
  double at(int r, int c) const { return v[static_cast<std::size_t>(r) * size + c]; }
};

block multiply(const block& a, const block& b) {
  block c{a.size, std::vector<double>(a.v.size(), 0.0)};
  for (int r = 0; r < a.size; ++r)
    for (int k = 0; k < a.size; ++k) {
      const double x = a.at(r, k);
      for (int col = 0; col < a.size; ++col) c.at(r, col) += x * b.at(k, col);
    }
  return c;
}

block add_all(const std::vector<block>& parts) {
  block sum = parts.front();
  for (std::size_t p = 1; p < parts.size(); ++p)
    for (std::size_t i = 0; i < sum.v.size(); ++i) sum.v[i] += parts[p].v[i];
  return sum;
}

int run_matmul(long n_option, long blocks_option, unsigned seed) {
  const int nb = static_cast<int>(std::max(1L, blocks_option));
  const int bs = static_cast<int>(std::max(1L, n_option / nb));
  const int n = nb * bs;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  auto random_block = [&] {
    block b{bs, std::vector<double>(static_cast<std::size_t>(bs) * bs)};
    for (double& x : b.v) x = dist(rng);
    return b;
  };
  std::vector<block> a, b;  // nb x nb blocks each, row-major
  for (int i = 0; i < nb * nb; ++i) a.push_back(random_block());
  for (int i = 0; i < nb * nb; ++i) b.push_back(random_block());

  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();
  cppless::graph::builder builder(instance);

  const auto t0 = clock_type::now();
  auto start = cppless::schedule(builder);
  std::vector<cppless::graph::future<block>> c, product_futures;
  for (int i = 0; i < nb; ++i)
    for (int j = 0; j < nb; ++j) {
      std::vector<cppless::graph::sender<block>> products;
      for (int k = 0; k < nb; ++k) {
        const block& lhs = a[i * nb + k];
        const block& rhs = b[k * nb + j];
        products.push_back(cppless::then(start, [lhs, rhs] { return multiply(lhs, rhs); }));
        product_futures.push_back(products.back().future());
      }
      auto sum = cppless::then(cppless::when_all(products), [](const std::vector<block>& parts) { return add_all(parts); });
      c.push_back(sum.future());
    }
  const auto totals = builder.await_all();
  std::vector<block> result;
  for (auto& f : c) result.push_back(f.get());
  const auto t1 = clock_type::now();
  double inside = 0, round_trips = 0;  // what the workers spent computing, what the calls took
  for (auto* list : {&product_futures, &c})
    for (auto& f : *list) {
      inside += ms(f.stats().execution).count();
      round_trips += ms(f.stats().round_trip).count();
    }

  // The same blocks, serially on the host.
  double worst = 0;
  for (int i = 0; i < nb; ++i)
    for (int j = 0; j < nb; ++j) {
      std::vector<block> parts;
      for (int k = 0; k < nb; ++k) parts.push_back(multiply(a[i * nb + k], b[k * nb + j]));
      const block expected = add_all(parts);
      const block& got = result[static_cast<std::size_t>(i) * nb + j];
      for (std::size_t e = 0; e < expected.v.size(); ++e) worst = std::max(worst, std::abs(expected.v[e] - got.v[e]));
    }
  const auto t2 = clock_type::now();

  const bool ok = worst == 0.0;  // same operations in the same order: bit-identical
  std::printf("blocked matrix multiply %dx%d as a task graph: %dx%d blocks of %d, %zu calls (%d products, %d sums), %zu nodes\n",
              n, n, nb, nb, bs, totals.calls, nb * nb * nb, nb * nb, totals.nodes);
  std::printf("graph on %u local workers: %.1f ms (workers computing: %.1f ms in all, calls' round trips: %.1f ms in all); "
              "the same on the host, serially: %.1f ms\n",
              dispatcher.worker_count(), ms(t1 - t0).count(), inside, round_trips, ms(t2 - t1).count());
  std::printf("result %s the serial product (largest difference %g)\n", ok ? "matches" : "DOES NOT match", worst);
  return ok ? 0 : 1;
}

// --- merge sort tree ------------------------------------------------------------------------------

using values = std::vector<int>;

values merge_sorted(const values& a, const values& b) {
  values out(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), out.begin());
  return out;
}

int run_sort(long n, long leaves_option, unsigned seed) {
  const long leaves = std::max(1L, leaves_option);
  values input(static_cast<std::size_t>(n));
  std::mt19937 rng(seed);
  for (int& x : input) x = static_cast<int>(rng());

  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();
  cppless::graph::builder builder(instance);

  const auto t0 = clock_type::now();
  auto start = cppless::schedule(builder);
  std::vector<cppless::graph::sender<values>> level;
  for (long i = 0; i < leaves; ++i) {
    values slice(input.begin() + n * i / leaves, input.begin() + n * (i + 1) / leaves);  // travels with the call
    level.push_back(cppless::then(start, [slice]() mutable {
      std::sort(slice.begin(), slice.end());
      return slice;
    }));
  }
  int depth = 0;
  while (level.size() > 1) {
    std::vector<cppless::graph::sender<values>> next;
    for (std::size_t i = 0; i + 1 < level.size(); i += 2)
      next.push_back(cppless::then(cppless::when_all(level[i], level[i + 1]),
                                   [](const values& x, const values& y) { return merge_sorted(x, y); }));
    if (level.size() % 2) next.push_back(level.back());  // an odd one out moves up unchanged
    level = std::move(next);
    ++depth;
  }
  auto sorted = level.front().future();
  level.clear();  // intermediate arrays may leave the host as soon as their merge started
  const auto totals = builder.await_all();
  const values result = sorted.get();
  const auto t1 = clock_type::now();

  values expected = input;
  std::sort(expected.begin(), expected.end());
  const auto t2 = clock_type::now();

  const bool ok = result == expected;
  std::printf("merge sort of %ld ints as a task graph: %ld leaf sorts, %d merge levels, %zu calls, %zu nodes\n", n,
              leaves, depth, totals.calls, totals.nodes);
  std::printf("graph on %u local workers: %.1f ms (every array passes through the host); serial std::sort: %.1f ms\n",
              dispatcher.worker_count(), ms(t1 - t0).count(), ms(t2 - t1).count());
  std::printf("result %s the serial sort\n", ok ? "matches" : "DOES NOT match");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* kind = example::option(argc, argv, "--kind", "matmul");
  const auto seed = static_cast<unsigned>(example::option_long(argc, argv, "--seed", 7));
  if (std::strcmp(kind, "sort") == 0)
    return run_sort(example::option_long(argc, argv, "--n", 1'000'000), example::option_long(argc, argv, "--leaves", 16), seed);
  if (std::strcmp(kind, "matmul") == 0)
    return run_matmul(example::option_long(argc, argv, "--n", 384), example::option_long(argc, argv, "--blocks", 3), seed);
  std::fprintf(stderr, "unknown --kind %s (matmul or sort)\n", kind);
  return 2;
}
