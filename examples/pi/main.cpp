// Monte-Carlo estimate of pi, offloaded to local workers (the paper's Figure 3).
//
//   pi_example [--n 40000000] [--tasks 64] [--workers 0]
#include <cppless/cppless.hpp>

#include "../common/args.hpp"

#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

// Ordinary C++: the fraction of n random points that fall inside the unit circle, times 4.
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
  const int np = static_cast<int>(example::option_long(argc, argv, "--tasks", 64));
  cppless::local_options options;
  options.workers = static_cast<unsigned>(example::option_long(argc, argv, "--workers", 0));

  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  double serial = 0;
  for (int i = 0; i < np; ++i) serial += pi_estimate(n / np, static_cast<unsigned>(i));
  serial /= np;
  const double serial_s = std::chrono::duration<double>(clock::now() - t0).count();

  cppless::local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();
  using config = cppless::config<cppless::with_memory<512>, cppless::with_timeout<60>>;

  t0 = clock::now();
  std::vector<double> results(np);
  auto fn = [=](unsigned seed) { return pi_estimate(n / np, seed); };  // n and np travel with the call
  for (int i = 0; i < np; ++i) cppless::dispatch<config>(instance, fn, results[i], static_cast<unsigned>(i));
  cppless::wait(instance, np);
  const double pi = std::accumulate(results.begin(), results.end(), 0.0) / np;  // same order as serial
  const double offload_s = std::chrono::duration<double>(clock::now() - t0).count();

  std::printf("pi: %.6f (serial %.6f, same seeds: %s)\n", pi, serial, pi == serial ? "identical" : "DIFFERENT");
  std::printf("pi: %d calls of %ld samples on %u local workers: %.3f s, serial %.3f s, speedup %.2fx\n", np, n / np,
              dispatcher.worker_count(), offload_s, serial_s, serial_s / offload_s);
  return pi == serial ? 0 : 1;
}
