// bench_trace: what tracing (CPPLESS_TRACE / cppless::trace::start) adds to the hot no-op call.
// One worker, busy-polling; 64 B in, 64 B out; timed like bench_local's call_hot (two clock reads
// per round trip). Rounds alternate tracing off and on on the same warm worker, so machine load
// drifts over both alike; the figure is the ratio of the medians over all rounds.
//
//   bench_trace [--quick] [--rounds N] [--calls N]
//
// JSON lines: one per round ({"suite":"trace","case":"hot_noop","tracing":...,"median_ns":...})
// and a summary ({"case":"hot_noop_overhead","ratio":on/off,...}).
#include <cppless/cppless.hpp>
#include <cppless/trace.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using payload64 = std::array<std::uint8_t, 64>;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int rounds = 10, calls = 20000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--calls") == 0 && i + 1 < argc) calls = std::atoi(argv[++i]);
  }
  if (quick) rounds = std::min(rounds, 4), calls = std::min(calls, 5000);
  const std::string path =
      (std::filesystem::temp_directory_path() / ("cppless-bench-trace-" + std::to_string(::getpid()) + ".jsonl")).string();

  cppless::local_options options;
  options.workers = 1;
  options.hot_poll = std::chrono::microseconds(1000);
  cppless::local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();
  payload64 in{}, out{};
  auto noop = [](const payload64& p) { return p; };
  for (int i = 0; i < 1000; ++i) {  // start and warm the worker
    cppless::dispatch(instance, noop, out, in);
    instance.wait_one();
  }

  std::vector<double> all[2];
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 2; ++k) {
      const int tracing = (k + r) % 2;  // which goes first alternates too
      if (tracing) cppless::trace::start(path);
      std::vector<double> samples;
      samples.reserve(static_cast<std::size_t>(calls));
      for (int i = 0; i < calls; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        cppless::dispatch(instance, noop, out, in);
        instance.wait_one();
        samples.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
      }
      if (tracing) cppless::trace::stop();  // (writes the lines: not timed, as in a real run's background)
      const double m = median(samples);
      all[tracing].push_back(m);
      std::printf("{\"suite\":\"trace\",\"case\":\"hot_noop\",\"tracing\":%s,\"round\":%d,\"calls\":%d,\"median_ns\":%.1f}\n",
                  tracing ? "true" : "false", r, calls, m);
      std::fflush(stdout);
    }
  }
  const std::uintmax_t bytes = std::filesystem::exists(path) ? std::filesystem::file_size(path) : 0;
  std::filesystem::remove(path);
  const double off = median(all[0]), on = median(all[1]);
  std::printf("{\"suite\":\"trace\",\"case\":\"hot_noop_overhead\",\"rounds\":%d,\"calls\":%d,\"median_off_ns\":%.1f,"
              "\"median_on_ns\":%.1f,\"ratio\":%.4f,\"goal_ratio\":1.05,\"bytes_per_line\":%.0f}\n",
              rounds, calls, off, on, on / off, static_cast<double>(bytes) / (calls + 1));
  return 0;
}
