// The application kernels of the benchmark suite, shared by every contender so that each one runs
// exactly the same machine code path (C++17: the Ray C++ peer is built with -std=c++17).
//
//   pi_estimate(n, seed)         Monte-Carlo pi on n samples (the paper's Figure 3 workload). The
//                                uniform double is made from the top 53 bits of mt19937_64 by hand:
//                                std::uniform_real_distribution costs ~145 ns per number with
//                                Clang 19 + libstdc++ (a long-double log() per call, which GCC
//                                folds away) against ~4 ns here, and would make the benchmark
//                                measure that instead of the frameworks.
//   queens_prefixes(n, depth)    every valid placement of the first `depth` rows, flattened
//   queens_solve(n, depth, ...)  solutions below a list of prefixes (examples/nqueens' backtracking)
//   queens_share(all, t, T)      the prefixes of task t of T (strided, so tasks get similar work)
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace bench_kernels {

inline double pi_estimate(long n, unsigned seed) {
  std::mt19937_64 rng(seed);
  auto unit = [&rng] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  long inside = 0;
  for (long i = 0; i < n; ++i) {
    double x = unit(), y = unit();
    inside += x * x + y * y <= 1.0;
  }
  return 4.0 * static_cast<double>(inside) / static_cast<double>(n);
}

inline long queens_count_from(int n, unsigned cols, unsigned diag1, unsigned diag2, int row) {
  if (row == n) return 1;
  long total = 0;
  unsigned free = ~(cols | diag1 | diag2) & ((1u << n) - 1);
  while (free) {
    unsigned bit = free & (0u - free);
    free ^= bit;
    total += queens_count_from(n, cols | bit, (diag1 | bit) << 1, (diag2 | bit) >> 1, row + 1);
  }
  return total;
}

namespace detail {
inline void prefixes(int n, int depth, int row, unsigned cols, unsigned d1, unsigned d2, std::vector<int>& current,
                     std::vector<int>& out) {
  if (row == depth) {
    out.insert(out.end(), current.begin(), current.end());
    return;
  }
  for (int c = 0; c < n; ++c) {
    unsigned bit = 1u << c;
    if ((cols | d1 | d2) & bit) continue;
    current.push_back(c);
    prefixes(n, depth, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1, current, out);
    current.pop_back();
  }
}
}  // namespace detail

// Valid prefixes of `depth` rows, `depth` ints each, in lexicographic order.
inline std::vector<int> queens_prefixes(int n, int depth) {
  std::vector<int> out, current;
  detail::prefixes(n, depth, 0, 0, 0, 0, current, out);
  return out;
}

// Solutions below `count` prefixes of `depth` rows each.
inline long queens_solve(int n, int depth, const int* prefixes, std::size_t count) {
  long total = 0;
  for (std::size_t p = 0; p < count; ++p) {
    unsigned cols = 0, d1 = 0, d2 = 0;
    for (int r = 0; r < depth; ++r) {
      unsigned bit = 1u << prefixes[p * static_cast<std::size_t>(depth) + static_cast<std::size_t>(r)];
      cols |= bit;
      d1 = (d1 | bit) << 1;
      d2 = (d2 | bit) >> 1;
    }
    total += queens_count_from(n, cols, d1, d2, depth);
  }
  return total;
}

// Task t of T gets prefixes t, t+T, t+2T, ... (flattened, `depth` ints each).
inline std::vector<int> queens_share(const std::vector<int>& all, int depth, int t, int tasks) {
  std::vector<int> mine;
  const std::size_t count = all.size() / static_cast<std::size_t>(depth);
  for (std::size_t p = static_cast<std::size_t>(t); p < count; p += static_cast<std::size_t>(tasks))
    mine.insert(mine.end(), all.begin() + static_cast<std::ptrdiff_t>(p * depth),
                all.begin() + static_cast<std::ptrdiff_t>((p + 1) * depth));
  return mine;
}

inline long queens_known(int n) {
  static const long known[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512};
  return n >= 0 && n <= 16 ? known[n] : -1;
}

}  // namespace bench_kernels
