// AWS backend throughput and latency through the local Lambda server (HTTPS, HTTP/2), with 1,
// 64 and 1,000 calls in flight, and boto3 with a thread pool against the same server in the
// same run (bench/aws_boto3_bench.py). Also the client alone: how fast dispatch hands calls
// over (encode + queue, no network), the paper's "ten invocations per millisecond" floor.
// Prints one JSON line per measurement.
//
//   bench_aws [--quick] [--calls 10000] [--rounds 3] [--envs 2] [--connections 16] [--python build/venv/bin/python]
//
// Each round measures cppless (1, 64, 1,000 in flight) and then boto3 (1 and 64 threads); the
// report takes the median of each over the rounds.
#include <cppless/aws.hpp>
#include <cppless/cppless.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <signal.h>
#include <spawn.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {
using steady = std::chrono::steady_clock;

std::string arg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return std::string(buf, static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
}

pid_t spawn(std::vector<std::string> args, bool quiet) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (quiet) posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
  pid_t pid = -1;
  posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

// CPU time of this process (the client: the caller's thread and the I/O thread; the server and
// its environments are other processes).
double process_cpu_s() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

void run(cppless::instance& inst, int calls, int inflight, const char* client) {
  std::vector<int> out(static_cast<std::size_t>(calls));
  std::vector<steady::time_point> sent(static_cast<std::size_t>(calls));
  std::vector<double> latency_us;
  latency_us.reserve(static_cast<std::size_t>(calls));
  auto noop = [](int x) { return x; };
  int next = 0, done = 0;
  std::int64_t base = -1;  // call ids count on across runs of one instance
  const double cpu0 = process_cpu_s();
  const auto t0 = steady::now();
  while (done < calls) {
    while (next < calls && next - done < inflight) {
      sent[static_cast<std::size_t>(next)] = steady::now();
      const auto id = cppless::dispatch(inst, noop, out[static_cast<std::size_t>(next)], next);
      if (base < 0) base = id;
      ++next;
    }
    auto [id, stats] = inst.wait_one();
    latency_us.push_back(std::chrono::duration<double, std::micro>(steady::now() - sent[static_cast<std::size_t>(id - base)]).count());
    ++done;
  }
  const double s = std::chrono::duration<double>(steady::now() - t0).count();
  const double cpu_us = (process_cpu_s() - cpu0) * 1e6 / calls;
  std::sort(latency_us.begin(), latency_us.end());
  std::printf("{\"bench\":\"aws\",\"client\":\"%s\",\"inflight\":%d,\"calls\":%d,\"per_s\":%.0f,\"p50_us\":%.0f,\"p99_us\":%.0f,"
              "\"client_cpu_us_per_call\":%.1f}\n",
              client, inflight, calls, calls / s, latency_us[latency_us.size() / 2],
              latency_us[latency_us.size() * 99 / 100], cpu_us);
  std::fflush(stdout);
}
}  // namespace

int main(int argc, char** argv) {
  const bool quick = std::find_if(argv + 1, argv + argc, [](const char* a) { return std::strcmp(a, "--quick") == 0; }) != argv + argc;
  const int calls = std::atoi(arg(argc, argv, "--calls", quick ? "3000" : "10000").c_str());
  const int rounds = std::atoi(arg(argc, argv, "--rounds", quick ? "1" : "3").c_str());
  const std::string envs = arg(argc, argv, "--envs", "2");
  const std::string python = arg(argc, argv, "--python", CPPLESS_VENV_PYTHON);
  // --throttled-map: 40 two-second calls sent at once to a function limited to 4 environments
  // (the server answers 429 beyond, as Lambda does); the ideal is 10 waves of 2 s = 20 s.
  const bool throttled_map =
      std::find_if(argv + 1, argv + argc, [](const char* a) { return std::strcmp(a, "--throttled-map") == 0; }) != argv + argc;
  char tmpl[] = "/tmp/bench-aws.XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  std::vector<std::string> server_args = {LAMBDA_SERVER, "--port", "0", "--port-file", dir + "/port", "--tls",
                                          dir + "/ca.pem", "--key", "AKIDBENCH:bench-secret", "--any-function",
                                          self_exe(), "--concurrency", throttled_map ? "4" : envs, "--work-dir",
                                          dir + "/work"};
  if (throttled_map) server_args.push_back("--throttle");
  const pid_t server = spawn(server_args, true);
  int port = 0;
  for (int i = 0; i < 1000 && !port; ++i) {
    std::ifstream in(dir + "/port");
    if (!(in >> port)) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const std::string endpoint = "https://127.0.0.1:" + std::to_string(port);
  ::setenv("AWS_ENDPOINT_URL_LAMBDA", endpoint.c_str(), 1);
  ::setenv("AWS_CA_BUNDLE", (dir + "/ca.pem").c_str(), 1);
  ::setenv("AWS_ACCESS_KEY_ID", "AKIDBENCH", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "bench-secret", 1);
  ::setenv("AWS_REGION", "us-east-1", 1);
  {
    cppless::aws_options options;
    options.function_prefix = "bench";
    options.log_tail = false;
    options.connections = static_cast<unsigned>(std::atoi(arg(argc, argv, "--connections", "16").c_str()));
    auto dispatcher = cppless::aws_dispatcher::from_env(options);
    auto inst = dispatcher.create_instance();
    if (throttled_map) {
      for (int round = 0; round < rounds; ++round) {
        const auto before = dispatcher.totals();
        std::vector<int> out(40);
        const auto t0 = steady::now();
        for (int i = 0; i < 40; ++i)
          cppless::dispatch(inst, [](int v) {
            std::this_thread::sleep_for(std::chrono::seconds(2));
            return v;
          }, out[static_cast<std::size_t>(i)], i);
        int failed = 0;
        for (int i = 0; i < 40; ++i) {
          try {
            inst.wait_one();
          } catch (const std::exception&) {
            ++failed;
          }
        }
        const double s = std::chrono::duration<double>(steady::now() - t0).count();
        const auto after = dispatcher.totals();
        std::printf("{\"bench\":\"aws_throttled_map\",\"calls\":40,\"concurrency\":4,\"call_s\":2,\"ideal_s\":20,"
                    "\"seconds\":%.2f,\"retries\":%llu,\"failed\":%d}\n",
                    s, static_cast<unsigned long long>(after.retries - before.retries), failed);
        std::fflush(stdout);
      }
    }
    if (!throttled_map) run(inst, 200, 64, "warmup");

    // boto3 with a thread pool, same server, same function, same request body.
    const cppless::entry* e = nullptr;
    for (auto* c : cppless::registry::global().entries())
      if (c->name.find("aws_bench.cpp") != std::string::npos) e = c;
    const bool boto3 = e && ::access(python.c_str(), X_OK) == 0;

    // Rounds alternate the two clients, so a busy spell of this shared machine hits both.
    for (int round = 0; round < (throttled_map ? 0 : rounds); ++round) {
      for (int inflight : {1, 64, 1000}) run(inst, inflight == 1 ? std::min(calls, 1000) : calls, inflight, "cppless");
      if (!boto3) continue;
      const std::string name = dispatcher.function_name(e->id, e->config);
      for (const char* threads : {"1", "64"}) {
        const pid_t py = spawn({python, BOTO3_BENCH, endpoint, dir + "/ca.pem", name, std::to_string(e->id_hash),
                                std::to_string(e->fingerprint), threads, std::to_string(std::min(calls, 1000))},
                               false);
        int status;
        ::waitpid(py, &status, 0);
      }
    }

    // The client alone: dispatch (encode, base64, hand-over to the I/O thread) of 10,000 calls.
    for (int round = 0; round < (throttled_map ? 0 : rounds); ++round) {
      std::vector<int> out(10000);
      const auto t0 = steady::now();
      for (int i = 0; i < 10000; ++i) cppless::dispatch(inst, [](int x) { return x; }, out[static_cast<std::size_t>(i)], i);
      const double s = std::chrono::duration<double>(steady::now() - t0).count();
      std::printf("{\"bench\":\"aws\",\"client\":\"cppless-dispatch-only\",\"calls\":10000,\"per_ms\":%.1f}\n", 10 / s);
      std::fflush(stdout);
      cppless::wait(inst, 10000);
    }
  }
  ::kill(server, SIGTERM);
  int status;
  ::waitpid(server, &status, 0);
  std::filesystem::remove_all(dir);
  return 0;
}
