// N-queens solution count by prefix decomposition: every valid placement of the first rows is
// one task. Modes: serial, threads (std::thread), cppless (local workers), or all three.
//
//   nqueens_example [--n 12] [--depth 2] [--mode all|serial|threads|cppless]
#include <cppless/cppless.hpp>

#include "../common/args.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

namespace {

// Counts completions of a board whose first rows are given (bitmask backtracking).
long count_from(int n, unsigned cols, unsigned diag1, unsigned diag2, int row) {
  if (row == n) return 1;
  long total = 0;
  unsigned free = ~(cols | diag1 | diag2) & ((1u << n) - 1);
  while (free) {
    unsigned bit = free & -free;
    free ^= bit;
    total += count_from(n, cols | bit, (diag1 | bit) << 1, (diag2 | bit) >> 1, row + 1);
  }
  return total;
}

long solve_prefix(int n, const std::vector<int>& prefix) {
  unsigned cols = 0, d1 = 0, d2 = 0;
  for (int c : prefix) {
    unsigned bit = 1u << c;
    if ((cols | d1 | d2) & bit) return 0;
    cols |= bit;
    d1 = (d1 | bit) << 1;
    d2 = (d2 | bit) >> 1;
  }
  return count_from(n, cols, d1, d2, static_cast<int>(prefix.size()));
}

void prefixes(int n, int depth, std::vector<int>& current, std::vector<std::vector<int>>& out) {
  if (static_cast<int>(current.size()) == depth) {
    out.push_back(current);
    return;
  }
  for (int c = 0; c < n; ++c) {
    current.push_back(c);
    prefixes(n, depth, current, out);
    current.pop_back();
  }
}

long known_solutions(int n) {
  static const long known[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512};
  return n >= 0 && n <= 16 ? known[n] : -1;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = static_cast<int>(example::option_long(argc, argv, "--n", 12));
  const int depth = static_cast<int>(example::option_long(argc, argv, "--depth", 2));
  const std::string mode = example::option(argc, argv, "--mode", "all");
  if (n < 1 || n > 16) {
    std::fprintf(stderr, "nqueens: --n must be between 1 and 16\n");
    return 2;
  }
  std::vector<std::vector<int>> tasks;
  std::vector<int> current;
  prefixes(n, std::min(depth, n), current, tasks);

  using clock = std::chrono::steady_clock;
  bool ok = true;
  double serial_s = 0;
  auto report = [&](const char* name, long count, double seconds, const char* extra) {
    const bool right = count == known_solutions(n);
    ok &= right;
    std::printf("nqueens %-8s N=%d: %ld solutions (%s), %zu tasks, %.3f s%s%s\n", name, n, count,
                right ? "correct" : "WRONG", tasks.size(), seconds, serial_s > 0 ? "" : "", extra);
  };

  if (mode == "all" || mode == "serial") {
    auto t0 = clock::now();
    long total = 0;
    for (auto& p : tasks) total += solve_prefix(n, p);
    serial_s = std::chrono::duration<double>(clock::now() - t0).count();
    report("serial", total, serial_s, "");
  }
  if (mode == "all" || mode == "threads") {
    auto t0 = clock::now();
    std::atomic<long> total{0};
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t)
      threads.emplace_back([&] {
        for (std::size_t i; (i = next++) < tasks.size();) total += solve_prefix(n, tasks[i]);
      });
    for (auto& t : threads) t.join();
    double s = std::chrono::duration<double>(clock::now() - t0).count();
    char extra[64] = "";
    if (serial_s > 0) std::snprintf(extra, sizeof extra, ", speedup %.2fx", serial_s / s);
    report("threads", total.load(), s, extra);
  }
  if (mode == "all" || mode == "cppless") {
    cppless::local_dispatcher dispatcher;
    auto instance = dispatcher.create_instance();
    auto t0 = clock::now();
    std::vector<long> counts(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i)
      cppless::dispatch(instance, [n](const std::vector<int>& prefix) { return solve_prefix(n, prefix); }, counts[i],
                        tasks[i]);
    cppless::wait(instance, tasks.size());
    double s = std::chrono::duration<double>(clock::now() - t0).count();
    char extra[96];
    std::snprintf(extra, sizeof extra, ", %u workers%s", dispatcher.worker_count(), "");
    if (serial_s > 0)
      std::snprintf(extra, sizeof extra, ", %u workers, speedup %.2fx", dispatcher.worker_count(), serial_s / s);
    report("cppless", std::reduce(counts.begin(), counts.end()), s, extra);
  }
  return ok ? 0 : 1;
}
