// Shared-objects benchmark, against a redis-server it starts on a free loopback port.
//
//   latency     every operation against a raw PING to the same server (hiredis, no cppless code),
//               interleaved in rounds so machine load hits all of them alike; median and p99 of
//               single calls, ratio = median / median of the raw PING. Single-key operations
//               target <= 1.3x: an operation is one script, one round trip.
//   barrier     time per barrier generation with 2, 16, 64 parties (one process each),
//               measured in party 0 over back-to-back generations.
//   throughput  counter.add calls per second with 1..64 concurrent clients: forked processes, and
//               functions dispatched to cppless' local workers (one worker per function).
//
// JSON lines on stdout ({"suite":"shared","op":...}), a readable table on stderr.
//
//   bench_shared [--rounds N] [--quick]
#include <cppless/cppless.hpp>
#include <cppless/shared.hpp>
#include <cppless/testing/local_redis.hpp>

#include <hiredis/hiredis.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace sh = cppless::shared;
using clk = std::chrono::steady_clock;

namespace {

struct stats {
  double median = 0, p99 = 0;
  std::size_t n = 0;
};

stats summarize(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  stats s;
  s.n = v.size();
  if (v.empty()) return s;
  s.median = v[v.size() / 2];
  s.p99 = v[std::min(v.size() - 1, v.size() * 99 / 100)];
  return s;
}

struct op {
  std::string name;
  bool single_key;
  std::function<void()> call;
  std::vector<double> samples;
};

// Runs body(i) in n processes; returns what each wrote (text) to its pipe.
std::vector<std::string> in_processes(int n, const std::function<std::string(int)>& body) {
  std::vector<std::pair<pid_t, int>> kids;
  for (int i = 0; i < n; ++i) {
    int p[2];
    if (::pipe(p) != 0) std::exit(2);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(p[0]);
      std::string out;
      int code = 0;
      try {
        out = body(i);
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
  std::vector<std::string> outs;
  for (auto& [pid, fd] : kids) {
    std::string out;
    char buf[4096];
    for (ssize_t r; (r = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(r));
    ::close(fd);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "bench_shared: a worker process failed\n");
      std::exit(1);
    }
    outs.push_back(out);
  }
  return outs;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 40;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
  }
  if (quick) rounds = 8;

  cppless::testing::local_redis redis;
  auto store = sh::store::connect(redis.url());
  std::fprintf(stderr, "bench_shared: redis-server %d on 127.0.0.1:%d, namespace %s\n", redis.pid(), redis.port(),
               store.ns().c_str());

  // The baseline: PING on a plain hiredis connection.
  redisContext* raw = redisConnect("127.0.0.1", redis.port());
  if (raw == nullptr || raw->err) {
    std::fprintf(stderr, "bench_shared: raw connection failed\n");
    return 1;
  }
  auto raw_ping = [raw] { freeReplyObject(redisCommand(raw, "PING")); };

  auto counter = store.counter("counter");
  auto atom = store.atomic<std::int64_t>("atomic", 0);
  auto best = store.best<std::int64_t, std::vector<int>>("best", sh::maximize);
  best.offer(1'000'000'000, {1, 2, 3});
  auto map = store.map<std::int64_t, std::int64_t>("map");
  map.put(1, 1);
  auto queue = store.queue<std::int64_t>("queue");
  auto fut = store.write_once<std::int64_t>("future");
  fut.set(42);
  auto latch = store.latch("latch", 0);
  auto sem = store.semaphore("semaphore", 1);
  auto bar1 = store.barrier("barrier1", 1);
  std::int64_t cas_value = 0, improving = 0;
  const std::vector<int> payload{1, 2, 3};

  std::vector<op> ops = {
      {"ping_raw", true, raw_ping, {}},
      {"ping", true, [&] { store.ping(); }, {}},
      {"counter.add", true, [&] { counter.add(1); }, {}},
      {"counter.get", true, [&] { (void)counter.get(); }, {}},
      {"atomic.load", true, [&] { (void)atom.load(); }, {}},
      {"atomic.store", true, [&] { atom.store(7); }, {}},
      {"atomic.exchange", true, [&] { (void)atom.exchange(7); }, {}},
      {"atomic.compare_exchange", true,
       [&] {
         std::int64_t e = cas_value;
         if (atom.compare_exchange(e, cas_value + 1)) ++cas_value; else cas_value = e;
       },
       {}},
      {"best.value", true, [&] { (void)best.value(); }, {}},
      {"best.offer_no_gain", true, [&] { (void)best.offer(5, payload); }, {}},
      {"best.offer_improves", true, [&] { (void)best.offer(1'000'000'001 + improving++, payload); }, {}},
      {"best.get", true, [&] { (void)best.get(); }, {}},
      {"map.get", true, [&] { (void)map.get(1); }, {}},
      {"map.put", true, [&] { (void)map.put(2, 2); }, {}},
      {"map.merge_add", true, [&] { (void)map.merge(3, 1, sh::merge_op::add); }, {}},
      {"queue.push", true, [&] { queue.push(1); }, {}},
      {"queue.try_pop", true, [&] { (void)queue.try_pop(); }, {}},
      {"future.get_ready", true, [&] { (void)fut.get(); }, {}},
      {"latch.try_wait", true, [&] { (void)latch.try_wait(); }, {}},
      {"semaphore.try_acquire", true, [&] { (void)sem.try_acquire(); }, {}},
      {"semaphore.release", true, [&] { (void)sem.release(); }, {}},
      {"barrier.arrive_1_party", true, [&] { (void)bar1.arrive_and_wait(); }, {}},
  };

  // Warm-up: connections, script cache, CPU frequency.
  for (auto& o : ops)
    for (int i = 0; i < 200; ++i) o.call();
  const int batch = 100;
  for (int r = 0; r < rounds; ++r) {
    for (auto& o : ops) {
      for (int i = 0; i < batch; ++i) {
        auto t0 = clk::now();
        o.call();
        o.samples.push_back(std::chrono::duration<double, std::nano>(clk::now() - t0).count());
      }
    }
  }
  redisFree(raw);

  std::map<std::string, stats> results;
  for (auto& o : ops) results[o.name] = summarize(o.samples);
  const double base = results["ping_raw"].median;
  std::fprintf(stderr, "\n%-26s %12s %12s %8s\n", "operation", "median us", "p99 us", "x ping");
  for (auto& o : ops) {
    const stats& s = results[o.name];
    const double ratio = s.median / base;
    std::printf("{\"suite\":\"shared\",\"op\":\"%s\",\"median_ns\":%.0f,\"p99_ns\":%.0f,\"ratio_vs_ping\":%.3f,\"n\":%zu}\n",
                o.name.c_str(), s.median, s.p99, ratio, s.n);
    std::fprintf(stderr, "%-26s %12.1f %12.1f %8.2f%s\n", o.name.c_str(), s.median / 1e3, s.p99 / 1e3, ratio,
                 o.single_key && ratio > 1.3 ? "  (above 1.3x)" : "");
  }

  // Barrier generations, one process per party.
  std::fprintf(stderr, "\n%-26s %12s %12s %12s\n", "barrier", "median us", "p99 us", "mean us");
  for (int parties : {2, 16, 64}) {
    const int gens = quick ? 20 : (parties >= 64 ? 60 : 300);
    auto bar = store.barrier("barrier" + std::to_string(parties), parties);
    auto outs = in_processes(parties, [&](int id) {
      bar.arrive_and_wait(std::chrono::seconds(60));  // everyone connected and started
      std::string out;
      auto start = clk::now();
      for (int g = 0; g < gens; ++g) {
        auto t0 = clk::now();
        bar.arrive_and_wait(std::chrono::seconds(60));
        if (id == 0) out += std::to_string(std::chrono::duration<double, std::nano>(clk::now() - t0).count()) + " ";
      }
      if (id == 0) out += "T" + std::to_string(std::chrono::duration<double, std::nano>(clk::now() - start).count());
      return out;
    });
    std::vector<double> v;
    double total = 0;
    const std::string& o = outs[0];
    for (std::size_t pos = 0; pos < o.size();) {
      std::size_t end = o.find(' ', pos);
      if (o[pos] == 'T') {
        total = std::stod(o.substr(pos + 1));
        break;
      }
      v.push_back(std::stod(o.substr(pos, end - pos)));
      pos = end + 1;
    }
    stats s = summarize(v);
    std::printf("{\"suite\":\"shared\",\"op\":\"barrier\",\"parties\":%d,\"median_ns\":%.0f,\"p99_ns\":%.0f,\"mean_ns\":%.0f,"
                "\"generations\":%d}\n",
                parties, s.median, s.p99, total / gens, gens);
    std::fprintf(stderr, "%-26s %12.1f %12.1f %12.1f\n", (std::to_string(parties) + " parties").c_str(), s.median / 1e3,
                 s.p99 / 1e3, total / gens / 1e3);
  }

  // Counter throughput: clients add for a fixed time, started together by a latch.
  std::fprintf(stderr, "\n%-26s %12s\n", "counter.add throughput", "ops/s");
  const auto window = std::chrono::milliseconds(quick ? 300 : 1000);
  for (int clients : {1, 4, 16, 64}) {
    auto c = store.counter("throughput" + std::to_string(clients));
    auto go = store.latch("go" + std::to_string(clients), clients);
    in_processes(clients, [&](int) {
      go.arrive_and_wait(1, std::chrono::seconds(60));
      const auto end = clk::now() + window;
      while (clk::now() < end) c.add(1);
      return std::string();
    });
    const double ops_per_s = static_cast<double>(c.get()) / std::chrono::duration<double>(window).count();
    std::printf("{\"suite\":\"shared\",\"op\":\"counter.add_throughput\",\"clients\":%d,\"ops_per_s\":%.0f}\n", clients, ops_per_s);
    std::fprintf(stderr, "%-26s %12.0f\n", (std::to_string(clients) + " clients").c_str(), ops_per_s);
  }
  // The same with functions: handles captured by lambdas, run by local workers.
  for (int functions : {16, 64}) {
    cppless::local_options options;
    options.workers = static_cast<unsigned>(functions);
    cppless::local_dispatcher dispatcher(options);
    auto instance = dispatcher.create_instance();
    {  // start every worker before measuring
      std::vector<int> warm(static_cast<std::size_t>(functions));
      for (auto& w : warm) cppless::dispatch(instance, [](int x) { return x; }, w, 1);
      cppless::wait(instance, warm.size());
    }
    auto c = store.counter("fn_throughput" + std::to_string(functions));
    auto go = store.latch("fn_go" + std::to_string(functions), functions);
    const auto ms = window.count();
    auto task = [c, go, ms] {
      go.arrive_and_wait(1, std::chrono::seconds(60));
      const auto end = clk::now() + std::chrono::milliseconds(ms);
      while (clk::now() < end) c.add(1);
    };
    for (int i = 0; i < functions; ++i) cppless::dispatch(instance, task);
    cppless::wait(instance, static_cast<std::size_t>(functions));
    const double ops_per_s = static_cast<double>(c.get()) / std::chrono::duration<double>(window).count();
    std::printf("{\"suite\":\"shared\",\"op\":\"counter.add_throughput_functions\",\"functions\":%d,\"ops_per_s\":%.0f}\n",
                functions, ops_per_s);
    std::fprintf(stderr, "%-26s %12.0f\n", (std::to_string(functions) + " functions").c_str(), ops_per_s);
  }
  store.remove_namespace();
  return 0;
}
