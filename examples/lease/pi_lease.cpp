// Monte-Carlo pi on leased executors (the lease backend, docs/leases.md). The same code as
// examples/pi with one line changed, the dispatcher; it prints where each call ran.
//
//   CPPLESS_RESOURCE_MANAGER=tcp://127.0.0.1:7700 CPPLESS_USER=demo CPPLESS_SECRET=... \
//     pi_lease [--n 40000000] [--tasks 16] [--cores 4] [--warm]
#include <cppless/cppless.hpp>
#include <cppless/lease.hpp>

#include "../common/args.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

double pi_estimate(long n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  long inside = 0;
  for (long i = 0; i < n; ++i) {
    double x = unit(rng), y = unit(rng);
    inside += x * x + y * y <= 1.0;
  }
  return 4.0 * static_cast<double>(inside) / static_cast<double>(n);
}

int main(int argc, char** argv) {
  const long n = example::option_long(argc, argv, "--n", 40'000'000);
  const int np = static_cast<int>(example::option_long(argc, argv, "--tasks", 16));
  const auto cores = static_cast<unsigned>(example::option_long(argc, argv, "--cores", 4));
  bool warm = false;
  for (int i = 1; i < argc; ++i) warm = warm || std::string(argv[i]) == "--warm";

  try {
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    auto dispatcher = cppless::lease_dispatcher::from_env();
    auto instance = dispatcher.create_instance(cppless::lease_request{
        .cores = cores, .memory_mb = 512, .duration = std::chrono::minutes(5), .mode = warm ? cppless::warm : cppless::hot});
    const double lease_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    std::printf("lease %s: %u %s executors in %.1f ms\n", instance.lease_id().c_str(), cores, warm ? "warm" : "hot", lease_ms);
    for (auto& e : instance.executors())
      std::printf("  executor pid %d on %s, cpu %d, manager %s at %s%s\n", e.pid, e.host.c_str(), e.cpu, e.manager.c_str(),
                  e.address.c_str(), e.shipped ? " (executable shipped)" : " (executable cached)");

    t0 = clock::now();
    std::vector<double> results(np);
    std::map<std::int64_t, int> task_of;
    auto fn = [=](unsigned seed) { return pi_estimate(n / np, seed); };
    for (int i = 0; i < np; ++i) task_of[cppless::dispatch(instance, fn, results[i], static_cast<unsigned>(i))] = i;
    for (int k = 0; k < np; ++k) {
      auto [id, stats] = instance.wait_one();
      std::printf("  task %2d ran on %s (%.1f ms inside)\n", task_of[id], stats.invocation_id.c_str(),
                  std::chrono::duration<double, std::milli>(stats.execution).count());
    }
    const double pi = std::accumulate(results.begin(), results.end(), 0.0) / np;
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    const auto usage = instance.usage();
    std::printf("pi ~ %.6f from %ld samples in %d calls: %.3f s on the lease\n", pi, n, np, s);
    std::printf("usage: allocation %.3f s, compute %.3f s, hot polling %.3f s, %llu calls\n",
                std::chrono::duration<double>(usage.allocation).count(), std::chrono::duration<double>(usage.compute).count(),
                std::chrono::duration<double>(usage.hot_poll).count(), static_cast<unsigned long long>(usage.calls));
    return pi > 3.1 && pi < 3.2 ? 0 : 1;
  } catch (const cppless::error& e) {
    std::fprintf(stderr, "pi_lease: %s\n", e.what());
    return 1;
  }
}
