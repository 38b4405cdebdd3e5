// bench_shared_cluster — shared-object write throughput on one Redis server and on local Redis
// Clusters of 1 and 3 masters (no replicas), in one run:
//
//   counter.add  each client adds to a counter of its own (objects spread over the slots)
//   map.put      each client puts into a map of its own (16 keys round robin)
//
// Clients are forked processes that run for a fixed window, started together by a latch; the
// configurations take turns round by round (so machine load hits all alike). Prints one JSON line
// per figure (median over rounds, and the 3-master/1-master ratio) and a table on stderr.
//
//   bench_shared_cluster [--clients N] [--rounds R] [--window-ms W]
//
// On a 2-core machine the gain of 3 masters is bounded by the cores: the clients and the servers
// share them, and one Redis server already keeps one core busy.
#include <cppless/shared.hpp>
#include <cppless/testing/local_cluster.hpp>
#include <cppless/testing/local_redis.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace sh = cppless::shared;
using clk = std::chrono::steady_clock;

namespace {

// Runs body(i) in n processes; returns the numbers they write (one each).
std::vector<long long> in_processes(int n, const std::function<long long(int)>& body) {
  std::vector<std::pair<pid_t, int>> kids;
  for (int i = 0; i < n; ++i) {
    int p[2];
    if (::pipe(p) != 0) std::exit(2);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(p[0]);
      int code = 0;
      std::string out;
      try {
        out = std::to_string(body(i));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "worker %d: %s\n", i, e.what());
        code = 1;
      }
      if (::write(p[1], out.data(), out.size()) < 0) code = 1;
      ::_exit(code);
    }
    ::close(p[1]);
    kids.emplace_back(pid, p[0]);
  }
  std::vector<long long> outs;
  for (auto& [pid, fd] : kids) {
    std::string out;
    char buf[256];
    for (ssize_t r; (r = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(r));
    ::close(fd);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.empty()) {
      std::fprintf(stderr, "bench_shared_cluster: a worker process failed\n");
      std::exit(1);
    }
    outs.push_back(std::stoll(out));
  }
  return outs;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Calls per second of `clients` processes doing `op` on objects of their own for `window`.
double throughput(const sh::store& store, const std::string& op, int clients, std::chrono::milliseconds window, int round) {
  const std::string tag = op + "-" + std::to_string(round) + "-";
  auto go = store.latch(tag + "go", clients);
  auto outs = in_processes(clients, [&](int id) -> long long {
    const std::string mine = tag + std::to_string(id);
    long long n = 0;
    if (op == "counter.add") {
      auto c = store.counter(mine);
      c.add(0);  // scripts loaded, connection open
      go.arrive_and_wait(1, std::chrono::seconds(60));
      for (const auto end = clk::now() + window; clk::now() < end; ++n) c.add(1);
    } else {
      auto m = store.map<int, std::int64_t>(mine);
      m.put(0, 0);
      go.arrive_and_wait(1, std::chrono::seconds(60));
      for (const auto end = clk::now() + window; clk::now() < end; ++n) m.put(static_cast<int>(n % 16), n);
    }
    return n;
  });
  long long total = 0;
  for (long long n : outs) total += n;
  return static_cast<double>(total) / std::chrono::duration<double>(window).count();
}

}  // namespace

int main(int argc, char** argv) {
  int clients = 8, rounds = 3;
  std::chrono::milliseconds window{1000};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_shared_cluster: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::atoi(argv[++i]);
    };
    if (a == "--clients") {
      clients = value();
    } else if (a == "--rounds") {
      rounds = value();
    } else if (a == "--window-ms") {
      window = std::chrono::milliseconds(value());
    } else {
      std::fprintf(stderr, "usage: bench_shared_cluster [--clients N] [--rounds R] [--window-ms W]\n");
      return 2;
    }
  }
  if (clients < 1 || rounds < 1 || window.count() < 10) {
    std::fprintf(stderr, "bench_shared_cluster: clients and rounds must be >= 1, the window >= 10 ms\n");
    return 2;
  }
  sh::process_settings().retry_budget = std::chrono::seconds(10);
  cppless::testing::local_redis single;
  cppless::testing::local_cluster one(cppless::testing::local_cluster::options{.masters = 1, .replicas = 0});
  cppless::testing::local_cluster three(cppless::testing::local_cluster::options{.masters = 3, .replicas = 0});
  struct config {
    std::string name;
    int masters;
    sh::store store;
  };
  std::vector<config> configs = {{"standalone", 0, sh::store::connect(single.url())},
                                 {"cluster", 1, sh::store::connect(one.url())},
                                 {"cluster", 3, sh::store::connect(three.url())}};
  const std::vector<std::string> ops = {"counter.add", "map.put"};
  std::map<std::pair<std::string, std::size_t>, std::vector<double>> samples;
  for (int r = 0; r < rounds; ++r)
    for (const auto& op : ops)
      for (std::size_t c = 0; c < configs.size(); ++c) samples[{op, c}].push_back(throughput(configs[c].store, op, clients, window, r));

  std::fprintf(stderr, "\n%-12s %-12s %8s %14s %10s\n", "operation", "redis", "masters", "ops/s (median)", "x 1 master");
  for (const auto& op : ops) {
    const double base = median(samples[{op, 1}]);
    for (std::size_t c = 0; c < configs.size(); ++c) {
      const double v = median(samples[{op, c}]);
      const auto [lo, hi] = std::minmax_element(samples[{op, c}].begin(), samples[{op, c}].end());
      std::printf("{\"suite\":\"shared_cluster\",\"op\":\"%s\",\"redis\":\"%s\",\"masters\":%d,\"clients\":%d,\"rounds\":%d,"
                  "\"ops_per_s\":%.0f,\"min_ops_per_s\":%.0f,\"max_ops_per_s\":%.0f,\"ratio_vs_1_master\":%.3f}\n",
                  op.c_str(), configs[c].name.c_str(), configs[c].masters, clients, rounds, v, *lo, *hi, base > 0 ? v / base : 0.0);
      std::fprintf(stderr, "%-12s %-12s %8d %14.0f %10.2f\n", op.c_str(), configs[c].name.c_str(), configs[c].masters, v,
                   base > 0 ? v / base : 0.0);
    }
  }
  for (auto& c : configs) c.store.remove_namespace();
  return 0;
}
