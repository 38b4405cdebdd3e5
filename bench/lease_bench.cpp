// Lease backend benchmark: leased calls against the raw TCP round trip they ride on, in one run.
//
// Prints one JSON object per line (stdout) and a readable summary (stderr):
//   rtt            a no-op call (hot lease: both sides busy-poll; warm: both block) against a raw
//                  TCP ping-pong of the same size between this process and a process pinned to
//                  the executor's CPU (hot: busy-polling recv; warm: blocking recv)
//   first_result   lease request to the first result: executable cached at the manager, or
//                  shipped (a fresh manager with an empty cache each time)
//   payload        echo of 1 KB .. 5 MB through a warm lease against the blocking raw TCP echo
//   throughput     no-op calls dispatched at once on 4 warm executors over 2 managers, and the
//   pi             same for 16 pi tasks, each against the local backend (alternating runs)
//
//   bench_lease [--quick]
#include "cluster_fixture.hpp"

#include <cppless/cppless.hpp>
#include <cppless/lease.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int executor_cpu = 1;  // executors and the raw echo server share this CPU

struct summary {
  double median_ns, p10_ns, p90_ns, p99_ns;
};

summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]; };
  return {at(0.5), at(0.10), at(0.90), at(0.99)};
}

// --- the raw baseline: a TCP echo server in its own process ----------------------------------

// Busy-polling receives yield past the first rounds, as the lease's hot paths do: on two cores a
// spinning peer may share the CPU, and a baseline that waits out time slices is no baseline.
bool recv_all(int fd, void* data, std::size_t n, bool spin) {
  auto* p = static_cast<char*>(data);
  unsigned idle = 0;
  while (n > 0) {
    const ssize_t got = ::recv(fd, p, n, spin ? MSG_DONTWAIT : 0);
    if (got > 0) {
      p += got;
      n -= static_cast<std::size_t>(got);
      idle = 0;
    } else if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      return false;
    } else if (++idle > 64) {
      ::sched_yield();
    }
  }
  return true;
}

bool send_all(int fd, const void* data, std::size_t n) {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::send(fd, p, n, MSG_NOSIGNAL);
    if (put <= 0) return false;
    p += put;
    n -= static_cast<std::size_t>(put);
  }
  return true;
}

struct raw_hello {
  char mode;           // 'h': busy-poll, 'w': block
  std::uint64_t size;  // bytes of every message, both ways
};

// The minimal ping-pong: one send and one receive of `size` bytes per round on each side.
[[noreturn]] void echo_server(int listener) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(executor_cpu, &set);
  ::sched_setaffinity(0, sizeof set, &set);
  std::vector<char> buf;
  for (;;) {
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) ::_exit(0);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    raw_hello hello{};
    if (!recv_all(fd, &hello, sizeof hello, false)) ::_exit(0);
    buf.resize(hello.size);
    while (recv_all(fd, buf.data(), hello.size, hello.mode == 'h') && send_all(fd, buf.data(), hello.size)) {
    }
    ::close(fd);
  }
}

// Round trips of `size` bytes each way, in ns.
std::vector<double> raw_round_trips(std::uint16_t port, char mode, std::size_t size, int rounds) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return {};
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  raw_hello hello{mode, size};
  send_all(fd, &hello, sizeof hello);
  std::vector<char> out(size, 'x'), in(size);
  std::vector<double> times;
  const int warmup = std::max(1, rounds / 10);
  for (int i = 0; i < rounds + warmup; ++i) {
    const auto t0 = clock_type::now();
    send_all(fd, out.data(), size);
    recv_all(fd, in.data(), size, mode == 'h');
    if (i >= warmup) times.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - t0).count());
  }
  ::close(fd);
  return times;
}

std::vector<double> lease_round_trips(cppless::instance& instance, int rounds) {
  std::vector<double> times;
  int out = 0;
  for (int i = 0; i < rounds + rounds / 10; ++i) {
    const auto t0 = clock_type::now();
    cppless::dispatch(instance, [](int x) { return x + 1; }, out, i);
    instance.wait_one();
    if (i >= rounds / 10) times.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - t0).count());
  }
  return times;
}

std::vector<double> lease_echoes(cppless::instance& instance, std::size_t size, int rounds) {
  std::vector<char> payload(size, 'x'), back;
  std::vector<double> times;
  for (int i = 0; i < rounds + 1; ++i) {
    const auto t0 = clock_type::now();
    cppless::dispatch(instance, [](const std::vector<char>& v) { return v; }, back, payload);
    instance.wait_one();
    if (i >= 1) times.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - t0).count());
  }
  return times;
}

// Monte-Carlo pi samples in [seed's stream], the work of the scaling case.
long pi_hits(std::uint64_t seed, long samples) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  long hits = 0;
  for (long i = 0; i < samples; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const double a = static_cast<double>(x >> 11) * 0x1.0p-53;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const double b = static_cast<double>(x >> 11) * 0x1.0p-53;
    hits += a * a + b * b <= 1.0;
  }
  return hits;
}

// Throughput: `calls` no-op calls dispatched at once, then waited for; calls per second.
double throughput(cppless::instance& instance, int calls) {
  std::vector<int> out(static_cast<std::size_t>(calls));
  const auto t0 = clock_type::now();
  for (int i = 0; i < calls; ++i) cppless::dispatch(instance, [](int x) { return x; }, out[static_cast<std::size_t>(i)], i);
  cppless::wait(instance, static_cast<std::size_t>(calls));
  return calls / std::chrono::duration<double>(clock_type::now() - t0).count();
}

// pi with `tasks` calls of `samples` each; seconds, and whether every call's count is right.
std::pair<double, bool> pi_run(cppless::instance& instance, int tasks, long samples) {
  std::vector<long> hits(static_cast<std::size_t>(tasks));
  const auto t0 = clock_type::now();
  for (int i = 0; i < tasks; ++i)
    cppless::dispatch(instance, [](std::uint64_t seed, long n) { return pi_hits(seed, n); }, hits[static_cast<std::size_t>(i)],
                      std::uint64_t(i), samples);
  cppless::wait(instance, static_cast<std::size_t>(tasks));
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  bool right = true;
  for (int i = 0; i < tasks; i += std::max(1, tasks / 4)) right = right && hits[static_cast<std::size_t>(i)] == pi_hits(std::uint64_t(i), samples);
  return {s, right};
}

void emit_rtt(const char* mode, const summary& lease, const summary& raw, std::size_t samples) {
  std::printf("{\"suite\":\"lease\",\"case\":\"rtt\",\"mode\":\"%s\",\"lease_median_ns\":%.0f,\"lease_p10_ns\":%.0f,"
              "\"lease_p90_ns\":%.0f,\"lease_p99_ns\":%.0f,\"raw_median_ns\":%.0f,\"raw_p10_ns\":%.0f,\"raw_p90_ns\":%.0f,"
              "\"ratio\":%.3f,\"samples\":%zu}\n",
              mode, lease.median_ns, lease.p10_ns, lease.p90_ns, lease.p99_ns, raw.median_ns, raw.p10_ns, raw.p90_ns,
              lease.median_ns / raw.median_ns, samples);
  std::fflush(stdout);
  std::fprintf(stderr, "%-5s call %8.1f us   raw TCP %8.1f us   ratio %.2f\n", mode, lease.median_ns / 1e3,
               raw.median_ns / 1e3, lease.median_ns / raw.median_ns);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  const int rounds = quick ? 2000 : 10000;

  // The raw echo server starts first, before this process has threads.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(listener, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  ::listen(listener, 8);
  socklen_t len = sizeof sa;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&sa), &len);
  const std::uint16_t port = ntohs(sa.sin_port);
  const pid_t echo = ::fork();
  if (echo == 0) echo_server(listener);
  ::close(listener);
  struct stop_echo {
    pid_t pid;
    ~stop_echo() {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } echo_guard{echo};
  try {
  {
    lease_test::cluster c;
    c.add_manager(2, 4096, {"--cpus", std::to_string(executor_cpu), "--hot-poll-us", "2000000"});
    auto dispatcher = c.dispatcher();
    // The frame of a no-op call is 48 bytes of header and 8 to 12 of payload each way.
    constexpr std::size_t call_bytes = 56;
    {
      auto hot = dispatcher.create_instance({.cores = 1, .memory_mb = 512, .duration = 10min, .mode = cppless::hot});
      // Interleaved in blocks so that drifting machine load hits both alike.
      std::vector<double> lease_t, raw_t;
      for (int block = 0; block < 5; ++block) {
        auto l = lease_round_trips(hot, rounds / 5);
        auto r = raw_round_trips(port, 'h', call_bytes, rounds / 5);
        lease_t.insert(lease_t.end(), l.begin(), l.end());
        raw_t.insert(raw_t.end(), r.begin(), r.end());
      }
      emit_rtt("hot", summarize(lease_t), summarize(raw_t), lease_t.size());
    }
    {
      auto warm = dispatcher.create_instance({.cores = 1, .memory_mb = 512, .duration = 10min, .mode = cppless::warm});
      std::vector<double> lease_t, raw_t;
      for (int block = 0; block < 5; ++block) {
        auto l = lease_round_trips(warm, rounds / 5);
        auto r = raw_round_trips(port, 'w', call_bytes, rounds / 5);
        lease_t.insert(lease_t.end(), l.begin(), l.end());
        raw_t.insert(raw_t.end(), r.begin(), r.end());
      }
      emit_rtt("warm", summarize(lease_t), summarize(raw_t), lease_t.size());

      // Payload sweep on the warm lease against the blocking raw echo: both sides block.
      for (std::size_t size : {std::size_t{1} << 10, std::size_t{16} << 10, std::size_t{256} << 10, std::size_t{1} << 20,
                               std::size_t{5} << 20}) {
        const int n = size >= (std::size_t{1} << 20) ? (quick ? 10 : 40) : (quick ? 100 : 500);
        const auto l = summarize(lease_echoes(warm, size, n));
        const auto r = summarize(raw_round_trips(port, 'w', size, n));
        std::printf("{\"suite\":\"lease\",\"case\":\"payload\",\"mode\":\"warm\",\"bytes\":%zu,\"lease_median_ns\":%.0f,\"raw_median_ns\":%.0f,"
                    "\"ratio\":%.3f,\"lease_gib_s\":%.3f,\"samples\":%d}\n",
                    size, l.median_ns, r.median_ns, l.median_ns / r.median_ns,
                    2.0 * static_cast<double>(size) / l.median_ns / 1.073741824, n);
        std::fflush(stdout);
        std::fprintf(stderr, "echo %7zu B: lease %9.1f us   raw TCP %9.1f us   ratio %.2f\n", size, l.median_ns / 1e3,
                     r.median_ns / 1e3, l.median_ns / r.median_ns);
      }
    }

    // Throughput and pi on four executors over two managers (2 cores each) against the local
    // backend (one worker per core), the same calls, alternating.
    {
      lease_test::cluster two;
      two.add_manager(2, 4096, {"--hot-poll-us", "2000"});
      two.add_manager(2, 4096, {"--hot-poll-us", "2000"});
      auto lease = two.dispatcher().create_instance({.cores = 4, .memory_mb = 512, .duration = 10min, .mode = cppless::warm});
      cppless::local_dispatcher local_d;
      auto local = local_d.create_instance();
      const int calls = quick ? 5000 : 20000;
      const int tasks = 16;
      const long samples = quick ? 2'000'000 : 8'000'000;
      std::vector<double> lease_tp, local_tp, lease_pi, local_pi;
      bool right = true;
      for (int r = 0; r < (quick ? 2 : 3); ++r) {
        lease_tp.push_back(throughput(lease, calls));
        local_tp.push_back(throughput(local, calls));
        auto [ls, lr] = pi_run(lease, tasks, samples);
        auto [cs, cr] = pi_run(local, tasks, samples);
        lease_pi.push_back(ls);
        local_pi.push_back(cs);
        right = right && lr && cr;
      }
      const auto ltp = summarize(lease_tp), ctp = summarize(local_tp), lpi = summarize(lease_pi), cpi = summarize(local_pi);
      std::printf("{\"suite\":\"lease\",\"case\":\"throughput\",\"executors\":4,\"managers\":2,\"calls\":%d,"
                  "\"lease_per_s\":%.0f,\"local_per_s\":%.0f,\"runs\":%zu}\n",
                  calls, ltp.median_ns, ctp.median_ns, lease_tp.size());
      std::printf("{\"suite\":\"lease\",\"case\":\"pi\",\"executors\":4,\"managers\":2,\"tasks\":%d,\"samples\":%ld,"
                  "\"lease_s\":%.4f,\"local_s\":%.4f,\"correct\":%s,\"runs\":%zu}\n",
                  tasks, samples, lpi.median_ns, cpi.median_ns, right ? "true" : "false", lease_pi.size());
      std::fflush(stdout);
      std::fprintf(stderr, "throughput: lease %.0f/s, local %.0f/s; pi %d x %ld: lease %.3f s, local %.3f s%s\n", ltp.median_ns,
                   ctp.median_ns, tasks, samples, lpi.median_ns, cpi.median_ns, right ? "" : " (WRONG RESULTS)");
    }

    // Lease request to first result, the executable already in the manager's cache.
    std::vector<double> cached;
    for (int i = 0; i < (quick ? 5 : 20); ++i) {
      const auto t0 = clock_type::now();
      auto inst = dispatcher.create_instance({.cores = 1, .memory_mb = 512, .duration = 1min});
      cppless::async(inst, [] { return 1; }).get();
      cached.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - t0).count());
    }
    const auto s = summarize(cached);
    std::printf("{\"suite\":\"lease\",\"case\":\"first_result\",\"cached\":true,\"median_ns\":%.0f,\"p10_ns\":%.0f,"
                "\"p90_ns\":%.0f,\"samples\":%zu}\n",
                s.median_ns, s.p10_ns, s.p90_ns, cached.size());
    std::fflush(stdout);
    std::fprintf(stderr, "lease to first result, cached:  %.2f ms\n", s.median_ns / 1e6);
  }
  {
    // Not cached: a fresh manager (empty cache) each time, the only one with free cores.
    lease_test::cluster c;
    std::vector<double> shipped;
    long long bytes = 0;
    for (int i = 0; i < (quick ? 3 : 8); ++i) {
      if (!c.managers().empty()) c.stop(c.managers().back(), SIGTERM);
      c.add_manager(1, 4096, {"--cpus", std::to_string(executor_cpu)});
      auto dispatcher = c.dispatcher();
      const auto t0 = clock_type::now();
      auto inst = dispatcher.create_instance({.cores = 1, .memory_mb = 512, .duration = 1min});
      cppless::async(inst, [] { return 1; }).get();
      shipped.push_back(std::chrono::duration<double, std::nano>(clock_type::now() - t0).count());
      if (!inst.executors().at(0).shipped) std::fprintf(stderr, "warning: the executable was not shipped\n");
      char self[4096];
      const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
      self[n > 0 ? n : 0] = 0;
      FILE* f = std::fopen(self, "rb");
      if (f) {
        std::fseek(f, 0, SEEK_END);
        bytes = std::ftell(f);
        std::fclose(f);
      }
    }
    const auto s = summarize(shipped);
    std::printf("{\"suite\":\"lease\",\"case\":\"first_result\",\"cached\":false,\"median_ns\":%.0f,\"p10_ns\":%.0f,"
                "\"p90_ns\":%.0f,\"executable_bytes\":%lld,\"samples\":%zu}\n",
                s.median_ns, s.p10_ns, s.p90_ns, bytes, shipped.size());
    std::fflush(stdout);
    std::fprintf(stderr, "lease to first result, shipped (%lld bytes): %.2f ms\n", bytes, s.median_ns / 1e6);
  }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_lease: %s\n", e.what());
    return 1;
  }
  return 0;
}
