// Application and limit benchmarks of the peer suite (bench/run.sh runs it; bench/report.py reads
// its JSON lines). Every line is one measurement; repeats are separate lines, so the report takes
// the median and the spread itself.
//
//   bench_apps limits  [--rounds 5000] [--repeat 3]
//       raw round trips of 64 B not covered by bench_local: eventfd (a counter, no payload) and
//       TCP loopback (TCP_NODELAY), between this process and a forked child
//   bench_apps cold    --python PATH [--rounds 20] [--repeat 1]
//       process start to first result of a Python worker: spawn, send 64 B on stdin, read 64 B
//       back; bare interpreter, and one that imports NumPy first
//   bench_apps pi      [--samples 100000000] [--tasks 1,2,4,...,256] [--repeat 3] [--modes serial,threads,cppless]
//   bench_apps nqueens [--n 14] [--depth 3] [--tasks ...] [--repeat 3] [--modes ...]
//       strong scaling: the same total work split into T tasks, run serially (T = 1), on
//       std::thread (one thread per core pulling tasks), and on cppless local workers (warm)
#include <cppless/cppless.hpp>

#include "kernels.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using clock_type = std::chrono::steady_clock;

const char* option(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}
long option_long(int argc, char** argv, const char* name, long fallback) {
  const char* v = option(argc, argv, name, nullptr);
  return v ? std::strtol(v, nullptr, 10) : fallback;
}
std::vector<std::string> option_list(int argc, char** argv, const char* name, const char* fallback) {
  std::vector<std::string> out;
  std::stringstream in(option(argc, argv, name, fallback));
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Percentiles of one repeat, printed as one JSON line.
void emit_latency(const char* suite, const std::string& name, int repeat, std::vector<double> v, const char* note = "") {
  if (v.empty()) {
    std::printf("{\"suite\":\"%s\",\"case\":\"%s\",\"repeat\":%d,\"unavailable\":\"no samples\"}\n", suite,
                name.c_str(), repeat);
    return;
  }
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]; };
  std::printf("{\"suite\":\"%s\",\"case\":\"%s\",\"repeat\":%d,\"median_ns\":%.0f,\"p10_ns\":%.0f,\"p25_ns\":%.0f,"
              "\"p75_ns\":%.0f,\"p90_ns\":%.0f,\"p99_ns\":%.0f,\"samples\":%zu%s}\n",
              suite, name.c_str(), repeat, at(0.5), at(0.10), at(0.25), at(0.75), at(0.90), at(0.99), v.size(), note);
  std::fflush(stdout);
}

// --- raw limits -------------------------------------------------------------------------------

bool read_full(int fd, void* p, std::size_t n) {
  auto* b = static_cast<char*>(p);
  for (std::size_t got = 0; got < n;) {
    ssize_t k = ::read(fd, b + got, n - got);
    if (k <= 0) return false;
    got += static_cast<std::size_t>(k);
  }
  return true;
}
bool write_full(int fd, const void* p, std::size_t n) {
  auto* b = static_cast<const char*>(p);
  for (std::size_t done = 0; done < n;) {
    ssize_t k = ::write(fd, b + done, n - done);
    if (k <= 0) return false;
    done += static_cast<std::size_t>(k);
  }
  return true;
}

std::vector<double> eventfd_pingpong(int rounds) {
  int ping = ::eventfd(0, 0), pong = ::eventfd(0, 0);
  std::vector<double> samples;
  if (ping < 0 || pong < 0) return samples;
  pid_t child = ::fork();
  if (child == 0) {
    std::uint64_t v;
    for (int i = 0; i < rounds + 100; ++i) {
      if (!read_full(ping, &v, sizeof v)) break;
      if (!write_full(pong, &v, sizeof v)) break;
    }
    std::_Exit(0);
  }
  for (int i = 0; i < rounds + 100; ++i) {
    std::uint64_t v = 1;
    auto t0 = clock_type::now();
    if (!write_full(ping, &v, sizeof v) || !read_full(pong, &v, sizeof v)) break;
    if (i >= 100) samples.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - t0).count());
  }
  ::waitpid(child, nullptr, 0);
  ::close(ping);
  ::close(pong);
  return samples;
}

std::vector<double> tcp_pingpong(int rounds) {
  std::vector<double> samples;
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, 1) != 0 || ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return samples;
  pid_t child = ::fork();
  if (child == 0) {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) std::_Exit(1);
    std::array<char, 64> msg{};
    for (int i = 0; i < rounds + 100; ++i) {
      if (!read_full(s, msg.data(), msg.size())) break;
      if (!write_full(s, msg.data(), msg.size())) break;
    }
    std::_Exit(0);
  }
  int s = ::accept(listener, nullptr, nullptr);
  int one = 1;
  ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::array<char, 64> msg{};
  for (int i = 0; s >= 0 && i < rounds + 100; ++i) {
    auto t0 = clock_type::now();
    if (!write_full(s, msg.data(), msg.size()) || !read_full(s, msg.data(), msg.size())) break;
    if (i >= 100) samples.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - t0).count());
  }
  if (s >= 0) ::close(s);
  ::close(listener);
  ::waitpid(child, nullptr, 0);
  return samples;
}

int run_limits(int argc, char** argv) {
  const int rounds = static_cast<int>(option_long(argc, argv, "--rounds", 5000));
  const int repeat = static_cast<int>(option_long(argc, argv, "--repeat", 3));
  for (int r = 0; r < repeat; ++r) {
    emit_latency("limits", "raw_eventfd", r, eventfd_pingpong(rounds), ",\"payload_bytes\":8");
    emit_latency("limits", "raw_tcp_loopback", r, tcp_pingpong(rounds), ",\"payload_bytes\":64");
  }
  return 0;
}

// --- cold start of Python workers -----------------------------------------------------------

// Spawns `python -c code`, sends 64 B, waits for 64 B back: process start to first result.
double python_cold(const std::string& python, const std::string& code, bool& ok) {
  int to_child[2], from_child[2];
  ok = false;
  if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) return 0;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
  posix_spawn_file_actions_addclose(&actions, to_child[1]);
  posix_spawn_file_actions_addclose(&actions, from_child[0]);
  std::vector<std::string> args{python, "-c", code};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::array<char, 64> msg{};
  msg.fill('x');
  auto t0 = clock_type::now();
  pid_t pid;
  int rc = posix_spawn(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(to_child[0]);
  ::close(from_child[1]);
  double s = 0;
  if (rc == 0) {
    ok = write_full(to_child[1], msg.data(), msg.size()) && read_full(from_child[0], msg.data(), msg.size());
    s = seconds_since(t0);
  }
  ::close(to_child[1]);
  ::close(from_child[0]);
  if (rc == 0) ::waitpid(pid, nullptr, 0);
  return s * 1e9;
}

int run_cold(int argc, char** argv) {
  const std::string python = option(argc, argv, "--python", "/usr/bin/python3");
  const int rounds = static_cast<int>(option_long(argc, argv, "--rounds", 20));
  const int repeat = static_cast<int>(option_long(argc, argv, "--repeat", 1));
  const std::string worker = "import sys; d = sys.stdin.buffer.read(64); sys.stdout.buffer.write(d); sys.stdout.flush()";
  const std::pair<const char*, std::string> cases[] = {
      {"python_bare", worker},
      {"python_numpy", "import numpy; " + worker},
  };
  for (int r = 0; r < repeat; ++r)
    for (auto& [name, code] : cases) {
      std::vector<double> samples;
      bool ok = true;
      for (int i = 0; i < rounds && ok; ++i) {
        double ns = python_cold(python, code, ok);
        if (ok) samples.push_back(ns);
      }
      if (!ok) {
        std::printf("{\"suite\":\"cold\",\"case\":\"%s\",\"repeat\":%d,\"unavailable\":\"%s -c '%s' did not answer\"}\n",
                    name, r, python.c_str(), name);
        continue;
      }
      emit_latency("cold", name, r, samples);
    }
  return 0;
}

// --- applications -----------------------------------------------------------------------------

unsigned cores() { return std::max(1u, std::thread::hardware_concurrency()); }

// Runs `tasks` calls of task(i) on one thread per core; returns seconds.
template <class Result, class Task>
double on_threads(int tasks, Task task, std::vector<Result>& out) {
  out.assign(static_cast<std::size_t>(tasks), Result{});
  auto t0 = clock_type::now();
  std::atomic<int> next{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < cores(); ++t)
    threads.emplace_back([&] {
      for (int i; (i = next++) < tasks;) out[static_cast<std::size_t>(i)] = task(i);
    });
  for (auto& t : threads) t.join();
  return seconds_since(t0);
}

void emit_run(const char* app, const char* mode, long size, int tasks, int repeat, double seconds, bool correct,
              unsigned workers) {
  std::printf("{\"suite\":\"apps\",\"app\":\"%s\",\"mode\":\"%s\",\"size\":%ld,\"tasks\":%d,\"repeat\":%d,"
              "\"seconds\":%.6f,\"correct\":%s,\"workers\":%u,\"cores\":%u}\n",
              app, mode, size, tasks, repeat, seconds, correct ? "true" : "false", workers, cores());
  std::fflush(stdout);
}

bool has(const std::vector<std::string>& v, const char* s) { return std::find(v.begin(), v.end(), s) != v.end(); }

std::vector<int> task_counts(int argc, char** argv) {
  std::vector<int> out;
  for (auto& t : option_list(argc, argv, "--tasks", "1,2,4,8,16,32,64,128,256")) out.push_back(std::atoi(t.c_str()));
  return out;
}

// Makes sure every worker is started before anything is timed (cold start is measured apart).
void warm_up(cppless::instance& instance, unsigned workers) {
  std::vector<int> r(workers * 4);
  for (auto& x : r) cppless::dispatch(instance, [] { return 1; }, x);
  cppless::wait(instance, r.size());
}

int run_pi(int argc, char** argv) {
  const long samples = option_long(argc, argv, "--samples", 100'000'000);
  const int repeat = static_cast<int>(option_long(argc, argv, "--repeat", 3));
  const auto modes = option_list(argc, argv, "--modes", "serial,threads,cppless");
  const auto counts = task_counts(argc, argv);
  auto plausible = [](double pi) { return std::fabs(pi - 3.14159265) < 0.01; };
  auto mean = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); };

  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();
  if (has(modes, "cppless")) warm_up(instance, cores());

  for (int r = 0; r < repeat; ++r) {
    if (has(modes, "serial")) {
      auto t0 = clock_type::now();
      double pi = bench_kernels::pi_estimate(samples, 0);
      emit_run("pi", "serial", samples, 1, r, seconds_since(t0), plausible(pi), 1);
    }
    for (int tasks : counts) {
      const long per_task = samples / tasks;
      if (has(modes, "threads")) {
        std::vector<double> out;
        double s = on_threads(tasks, [&](int i) { return bench_kernels::pi_estimate(per_task, static_cast<unsigned>(i)); }, out);
        emit_run("pi", "threads", samples, tasks, r, s, plausible(mean(out)), cores());
      }
      if (has(modes, "cppless")) {
        std::vector<double> out(static_cast<std::size_t>(tasks));
        auto t0 = clock_type::now();
        auto fn = [per_task](unsigned seed) { return bench_kernels::pi_estimate(per_task, seed); };
        for (int i = 0; i < tasks; ++i) cppless::dispatch(instance, fn, out[static_cast<std::size_t>(i)], static_cast<unsigned>(i));
        cppless::wait(instance, out.size());
        emit_run("pi", "cppless", samples, tasks, r, seconds_since(t0), plausible(mean(out)), dispatcher.worker_count());
      }
    }
  }
  return 0;
}

int run_nqueens(int argc, char** argv) {
  const int n = static_cast<int>(option_long(argc, argv, "--n", 14));
  const int depth = static_cast<int>(option_long(argc, argv, "--depth", 3));
  const int repeat = static_cast<int>(option_long(argc, argv, "--repeat", 3));
  const auto modes = option_list(argc, argv, "--modes", "serial,threads,cppless");
  const auto counts = task_counts(argc, argv);
  if (n < 4 || n > 16 || depth < 1 || depth >= n) {
    std::fprintf(stderr, "bench_apps nqueens: need 4 <= --n <= 16 and 1 <= --depth < n\n");
    return 2;
  }
  const auto all = bench_kernels::queens_prefixes(n, depth);
  const long known = bench_kernels::queens_known(n);

  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();
  if (has(modes, "cppless")) warm_up(instance, cores());

  for (int r = 0; r < repeat; ++r) {
    if (has(modes, "serial")) {
      auto t0 = clock_type::now();
      long total = bench_kernels::queens_solve(n, depth, all.data(), all.size() / depth);
      emit_run("nqueens", "serial", n, 1, r, seconds_since(t0), total == known, 1);
    }
    for (int tasks : counts) {
      // The host decomposes (as a user would): task t gets every T-th prefix.
      std::vector<std::vector<int>> shares;
      for (int t = 0; t < tasks; ++t) shares.push_back(bench_kernels::queens_share(all, depth, t, tasks));
      if (has(modes, "threads")) {
        std::vector<long> out;
        double s = on_threads(tasks, [&](int i) {
          auto& p = shares[static_cast<std::size_t>(i)];
          return bench_kernels::queens_solve(n, depth, p.data(), p.size() / depth);
        }, out);
        emit_run("nqueens", "threads", n, tasks, r, s, std::reduce(out.begin(), out.end()) == known, cores());
      }
      if (has(modes, "cppless")) {
        std::vector<long> out(static_cast<std::size_t>(tasks));
        auto t0 = clock_type::now();
        auto fn = [n, depth](const std::vector<int>& prefixes) {
          return bench_kernels::queens_solve(n, depth, prefixes.data(), prefixes.size() / static_cast<std::size_t>(depth));
        };
        for (int i = 0; i < tasks; ++i)
          cppless::dispatch(instance, fn, out[static_cast<std::size_t>(i)], shares[static_cast<std::size_t>(i)]);
        cppless::wait(instance, out.size());
        emit_run("nqueens", "cppless", n, tasks, r, seconds_since(t0), std::reduce(out.begin(), out.end()) == known,
                 dispatcher.worker_count());
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "limits") return run_limits(argc, argv);
  if (what == "cold") return run_cold(argc, argv);
  if (what == "pi") return run_pi(argc, argv);
  if (what == "nqueens") return run_nqueens(argc, argv);
  std::fprintf(stderr, "usage: bench_apps limits|cold|pi|nqueens [options] (see bench/apps/apps_bench.cpp)\n");
  return 2;
}
