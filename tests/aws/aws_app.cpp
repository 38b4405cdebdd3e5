// A pi- and n-queens-style program for the deployment test: deployed with `cppless deploy`,
// then run as the host against the (local) Lambda endpoint. Exit 0 when both results are right.
#include <cppless/aws.hpp>
#include <cppless/cppless.hpp>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

double pi_estimate(long n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  long inside = 0;
  for (long i = 0; i < n; ++i) {
    const double x = unit(rng), y = unit(rng);
    inside += x * x + y * y <= 1.0;
  }
  return 4.0 * static_cast<double>(inside) / static_cast<double>(n);
}

long queens(int n, int row, unsigned cols, unsigned d1, unsigned d2) {
  if (row == n) return 1;
  long total = 0;
  for (unsigned free = ~(cols | d1 | d2) & ((1u << n) - 1); free;) {
    const unsigned bit = free & -free;
    free ^= bit;
    total += queens(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  const int tasks = argc > 1 ? std::atoi(argv[1]) : 8;
  auto dispatcher = cppless::aws_dispatcher::from_env();
  auto instance = dispatcher.create_instance();

  const long n = 100'000;
  std::vector<double> pis(static_cast<std::size_t>(tasks));
  using pi_config = cppless::config<cppless::with_memory<2048>, cppless::with_timeout<20>>;
  // A std::string capture and a std::vector argument: their type names differ between libstdc++
  // (this host build) and libc++ (the zig function build); the ids must not.
  const std::string label = "pi";
  auto pi_fn = [=](unsigned seed) { return pi_estimate(n + static_cast<long>(label.size()) - 2, seed); };
  for (int i = 0; i < tasks; ++i) cppless::dispatch<pi_config>(instance, pi_fn, pis[static_cast<std::size_t>(i)], static_cast<unsigned>(i));

  int board = 9;
  std::vector<long> counts(static_cast<std::size_t>(board));
  using queens_config = cppless::config<cppless::with_memory<256>, cppless::with_ephemeral_storage<1024>>;
  for (int c = 0; c < board; ++c)
    cppless::dispatch<queens_config>(
        instance,
        [board](std::vector<int> cols) {
          const int col = cols.at(0);
          return queens(board, 1, 1u << col, (1u << col) << 1, (1u << col) >> 1);
        },
        counts[static_cast<std::size_t>(c)], std::vector<int>{c});
  cppless::wait(instance, static_cast<std::size_t>(tasks + board));

  double pi = 0;
  bool same = true;
  for (int i = 0; i < tasks; ++i) {
    pi += pis[static_cast<std::size_t>(i)];
    same &= pis[static_cast<std::size_t>(i)] == pi_estimate(n, static_cast<unsigned>(i));
  }
  long solutions = 0;
  for (long v : counts) solutions += v;
  const auto totals = dispatcher.totals();
  std::printf("pi %.5f (%s), %d-queens %ld solutions, %llu calls, %llu cold, %lld ms billed\n", pi / tasks,
              same ? "same as local" : "DIFFERENT", board, solutions, static_cast<unsigned long long>(totals.calls),
              static_cast<unsigned long long>(totals.cold), static_cast<long long>(totals.billed.count()));
  return same && solutions == 352 ? 0 : 1;
}
