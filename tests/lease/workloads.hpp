// Work for the lease tests with results known in advance: Monte-Carlo pi (seeded, so the host
// can recompute every call) and n-queens split on the first row (known totals).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace lease_test {

inline long pi_hits(std::uint64_t seed, long samples) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  long hits = 0;
  for (long i = 0; i < samples; ++i) {
    const double x = u(rng), y = u(rng);
    hits += x * x + y * y <= 1.0;
  }
  return hits;
}

inline long queens_from(int n, int row, std::uint32_t cols, std::uint32_t d1, std::uint32_t d2) {
  if (row == n) return 1;
  long count = 0;
  std::uint32_t free = ~(cols | d1 | d2) & ((1u << n) - 1);
  while (free) {
    const std::uint32_t bit = free & -free;
    free ^= bit;
    count += queens_from(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
  }
  return count;
}

// Solutions with the first queen in column `col`.
inline long queens_first_col(int n, int col) {
  const std::uint32_t bit = 1u << col;
  return queens_from(n, 1, bit, bit << 1, bit >> 1);
}

}  // namespace lease_test
