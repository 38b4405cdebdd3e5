// The Ray C++ API peer (PyPI ray-cpp). Built twice from this one source by build.sh: the driver
// executable and a shared library that Ray's C++ workers load through the code search path.
// Connects to a running local Ray cluster (bench/peers/ray_peers.py starts one inside a network
// namespace that has only loopback) and prints one JSON line per measurement, like bench_apps.
//
//   ray_bench --address HOST:PORT --code DIR [--repeat 3] [--latency ROUNDS] [--throughput CALLS]
//             [--app-repeat 3] [--pi SAMPLES] [--nqueens N,N,... --depth 3] [--tasks 1,2,4,...,256]
//             [--serve yes]   (then reads "pi SAMPLES REPEAT" / "nqueens N DEPTH REPEAT" lines)
#include <ray/api.h>

#include "../../apps/kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

// --- the remote functions ---------------------------------------------------------------------

std::string Noop(std::string in) { return in; }
double PiTask(long n, unsigned seed) { return bench_kernels::pi_estimate(n, seed); }
long QueensTask(int n, int depth, std::vector<int> prefixes) {
  return bench_kernels::queens_solve(n, depth, prefixes.data(), prefixes.size() / static_cast<std::size_t>(depth));
}
RAY_REMOTE(Noop, PiTask, QueensTask);

// --- the driver -------------------------------------------------------------------------------

namespace {

using clock_type = std::chrono::steady_clock;

const char* option(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}
long option_long(int argc, char** argv, const char* name, long fallback) {
  const char* v = option(argc, argv, name, nullptr);
  return v ? std::strtol(v, nullptr, 10) : fallback;
}
double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

void emit_latency(int repeat, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]; };
  std::printf("{\"suite\":\"latency\",\"case\":\"ray_cpp\",\"repeat\":%d,\"median_ns\":%.0f,\"p10_ns\":%.0f,"
              "\"p25_ns\":%.0f,\"p75_ns\":%.0f,\"p90_ns\":%.0f,\"p99_ns\":%.0f,\"samples\":%zu}\n",
              repeat, at(0.5), at(0.10), at(0.25), at(0.75), at(0.90), at(0.99), v.size());
  std::fflush(stdout);
}

// mode "serial" with "by":"ray_cpp": the serial baseline measured by this driver, interleaved with
// its runs, so that Ray's speedups divide times taken under the same machine load.
void emit_run(const char* app, long size, int tasks, int repeat, double seconds, bool correct,
              const char* mode = "ray_cpp") {
  std::printf("{\"suite\":\"apps\",\"app\":\"%s\",\"mode\":\"%s\",\"by\":\"ray_cpp\",\"size\":%ld,\"tasks\":%d,"
              "\"repeat\":%d,\"seconds\":%.6f,\"correct\":%s}\n",
              app, mode, size, tasks, repeat, seconds, correct ? "true" : "false");
  std::fflush(stdout);
}

// One repeat of the strong-scaling sweep, preceded by the serial loop timed in this driver.
void run_pi(long samples, int r, const std::vector<int>& counts) {
  {
    auto t0 = clock_type::now();
    double pi = bench_kernels::pi_estimate(samples, 0);
    emit_run("pi", samples, 1, r, seconds_since(t0), std::fabs(pi - 3.14159265) < 0.01, "serial");
  }
  for (int tasks : counts) {
    const long per_task = samples / tasks;
    auto t0 = clock_type::now();
    std::vector<ray::ObjectRef<double>> refs;
    for (int i = 0; i < tasks; ++i) refs.push_back(ray::Task(PiTask).Remote(per_task, static_cast<unsigned>(i)));
    auto results = ray::Get(refs);
    double sum = 0;
    for (auto& p : results) sum += *p;
    emit_run("pi", samples, tasks, r, seconds_since(t0), std::fabs(sum / tasks - 3.14159265) < 0.01);
  }
}

void run_queens(int n, int depth, int r, const std::vector<int>& counts) {
  const auto all = bench_kernels::queens_prefixes(n, depth);
  {
    auto t0 = clock_type::now();
    long total = bench_kernels::queens_solve(n, depth, all.data(), all.size() / static_cast<std::size_t>(depth));
    emit_run("nqueens", n, 1, r, seconds_since(t0), total == bench_kernels::queens_known(n), "serial");
  }
  for (int tasks : counts) {
    auto t0 = clock_type::now();
    std::vector<ray::ObjectRef<long>> refs;
    for (int t = 0; t < tasks; ++t)
      refs.push_back(ray::Task(QueensTask).Remote(n, depth, bench_kernels::queens_share(all, depth, t, tasks)));
    auto results = ray::Get(refs);
    long total = 0;
    for (auto& c : results) total += *c;
    emit_run("nqueens", n, tasks, r, seconds_since(t0), total == bench_kernels::queens_known(n));
  }
}

}  // namespace

int main(int argc, char** argv) {
  ray::RayConfig config;
  config.address = option(argc, argv, "--address", "");
  config.code_search_path = {option(argc, argv, "--code", ".")};
  if (config.address.empty()) {
    std::fprintf(stderr, "ray_bench: --address of a running cluster is required (no ray start from here)\n");
    return 2;
  }
  ray::Init(config);

  const int repeat = static_cast<int>(option_long(argc, argv, "--repeat", 3));
  const int app_repeat = static_cast<int>(option_long(argc, argv, "--app-repeat", 3));
  std::vector<int> counts;
  {
    std::stringstream in(option(argc, argv, "--tasks", "1,2,4,8,16,32,64,128,256"));
    for (std::string item; std::getline(in, item, ',');)
      if (!item.empty()) counts.push_back(std::atoi(item.c_str()));
  }
  const std::string payload(64, 'x');

  // Warm-up: C++ workers are started on demand; cold start is not what this measures. A few
  // tasks per core of each remote function, each a few milliseconds. (Queueing hundreds of tasks
  // here makes Ray start many more workers than cores and retire them later, which disturbs
  // every measurement that follows, Ray's and the others'.)
  {
    const int most = 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const auto prefixes = bench_kernels::queens_prefixes(10, 2);
    for (int round = 0; round < 2; ++round) {
      std::vector<ray::ObjectRef<double>> pis;
      std::vector<ray::ObjectRef<long>> queens;
      std::vector<ray::ObjectRef<std::string>> noops;
      for (int i = 0; i < most; ++i) {
        pis.push_back(ray::Task(PiTask).Remote(300000L, static_cast<unsigned>(i)));
        queens.push_back(ray::Task(QueensTask).Remote(10, 2, prefixes));
        noops.push_back(ray::Task(Noop).Remote(payload));
      }
      ray::Get(pis);
      ray::Get(queens);
      ray::Get(noops);
    }
  }

  if (long rounds = option_long(argc, argv, "--latency", 0); rounds > 0)
    for (int r = 0; r < repeat; ++r) {
      std::vector<double> samples;
      for (long i = 0; i < rounds; ++i) {
        auto t0 = clock_type::now();
        auto out = *ray::Get(ray::Task(Noop).Remote(payload));
        samples.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - t0).count());
        if (out.size() != payload.size()) return 1;
      }
      emit_latency(r, samples);
    }

  if (long calls = option_long(argc, argv, "--throughput", 0); calls > 0)
    for (int r = 0; r < repeat; ++r) {
      auto t0 = clock_type::now();
      std::vector<ray::ObjectRef<std::string>> refs;
      refs.reserve(static_cast<std::size_t>(calls));
      for (long i = 0; i < calls; ++i) refs.push_back(ray::Task(Noop).Remote(payload));
      auto results = ray::Get(refs);
      const double s = seconds_since(t0);
      std::printf("{\"suite\":\"throughput\",\"case\":\"ray_cpp\",\"repeat\":%d,\"calls\":%ld,\"calls_per_s\":%.1f}\n", r,
                  calls, static_cast<double>(calls) / s);
      std::fflush(stdout);
    }

  if (long samples = option_long(argc, argv, "--pi", 0); samples > 0)
    for (int r = 0; r < app_repeat; ++r) run_pi(samples, r, counts);
  const int depth = static_cast<int>(option_long(argc, argv, "--depth", 3));
  std::stringstream queens(option(argc, argv, "--nqueens", ""));
  for (std::string item; std::getline(queens, item, ',');) {
    const int n = std::atoi(item.c_str());
    if (n < 4 || n > 16) continue;
    for (int r = 0; r < app_repeat; ++r) run_queens(n, depth, r, counts);
  }

  // --serve: one long-lived driver (as a Ray user keeps one), told by its parent what to run:
  // lines "pi SAMPLES REPEAT" or "nqueens N DEPTH REPEAT"; answers with JSON lines and {"done":true}.
  if (std::strcmp(option(argc, argv, "--serve", "no"), "yes") == 0) {
    std::string word;
    while (std::cin >> word) {
      if (word == "pi") {
        long samples;
        int r;
        std::cin >> samples >> r;
        run_pi(samples, r, counts);
      } else if (word == "nqueens") {
        int n, d, r;
        std::cin >> n >> d >> r;
        if (n >= 4 && n <= 16 && d >= 1 && d < n) run_queens(n, d, r, counts);
      }
      std::printf("{\"done\":true}\n");
      std::fflush(stdout);
    }
  }

  ray::Shutdown();
  return 0;
}
