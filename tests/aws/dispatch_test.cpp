// The AWS backend end to end through the local Lambda server: this test executable is both the
// host (dispatching through aws_dispatcher) and the function (started by the server with
// AWS_LAMBDA_RUNTIME_API, it runs the Runtime API loop instead of the tests).
#include "server_fixture.hpp"

#include <cppless/aws.hpp>
#include <cppless/cppless.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sys/stat.h>
#include <random>
#include <stdexcept>
#include <thread>

namespace {

using aws_test::local_lambda;

double pi_estimate(long n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  long inside = 0;
  for (long i = 0; i < n; ++i) {
    const double x = unit(rng), y = unit(rng);
    inside += x * x + y * y <= 1.0;
  }
  return 4.0 * static_cast<double>(inside) / static_cast<double>(n);
}

long queens(int n, int row, unsigned cols, unsigned d1, unsigned d2) {
  if (row == n) return 1;
  long total = 0;
  for (unsigned free = ~(cols | d1 | d2) & ((1u << n) - 1); free;) {
    const unsigned bit = free & -free;
    free ^= bit;
    total += queens(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
  }
  return total;
}

int calls_served_here() {
  static int served = 0;  // lives as long as the execution environment
  return ++served;
}

cppless::aws_dispatcher make_dispatcher(const local_lambda& server, cppless::aws_options options = {}) {
  server.export_env();
  options.function_prefix = "aws-test";
  return cppless::aws_dispatcher::from_env(options);
}

TEST(AwsDispatch, PiEstimateAcrossFunctions) {
  local_lambda server;
  auto dispatcher = make_dispatcher(server);
  auto instance = dispatcher.create_instance();
  const long n = 200'000;
  const int tasks = 16;
  std::vector<double> results(tasks);
  auto fn = [=](unsigned seed) { return pi_estimate(n, seed); };
  using config = cppless::config<cppless::with_memory<512>, cppless::with_timeout<30>>;
  for (int i = 0; i < tasks; ++i) cppless::dispatch<config>(instance, fn, results[i], static_cast<unsigned>(i));
  int cold = 0;
  for (int i = 0; i < tasks; ++i) {
    auto [id, stats] = instance.wait_one();
    EXPECT_FALSE(stats.invocation_id.empty());
    EXPECT_GT(stats.execution.count(), 0);
    cold += stats.cold;
  }
  EXPECT_GE(cold, 1);
  EXPECT_LE(cold, 4);  // the server's default: 4 environments per function
  for (int i = 0; i < tasks; ++i) EXPECT_EQ(results[i], pi_estimate(n, static_cast<unsigned>(i)));
  const auto totals = dispatcher.totals();
  EXPECT_EQ(totals.calls, 16u);
  EXPECT_GE(totals.billed.count(), 16);
}

TEST(AwsDispatch, NQueensPrefixes) {
  local_lambda server;
  auto dispatcher = make_dispatcher(server);
  auto instance = dispatcher.create_instance();
  int n = 10;  // not const: a constant would not be captured
  std::vector<long> counts(n);
  for (int c = 0; c < n; ++c)
    cppless::dispatch(instance, [n](int col) { return queens(n, 1, 1u << col, (1u << col) << 1, (1u << col) >> 1); },
                      counts[c], c);
  cppless::wait(instance, n);
  long total = 0;
  for (long v : counts) total += v;
  EXPECT_EQ(total, 724);
}

TEST(AwsDispatch, RemoteExceptionKeepsTypeAndMessage) {
  local_lambda server;
  auto dispatcher = make_dispatcher(server);
  auto instance = dispatcher.create_instance();
  int out = 0;
  cppless::dispatch(instance, [](int x) -> int { throw std::invalid_argument("bad x " + std::to_string(x)); }, out, 7);
  try {
    instance.wait_one();
    FAIL() << "expected remote_error";
  } catch (const cppless::remote_error& e) {
    EXPECT_EQ(e.remote_type(), "std::invalid_argument");
    EXPECT_NE(e.remote_message().find("bad x 7"), std::string::npos);
  }
  auto f = cppless::async(instance, [](int k) { return k * 2; }, 21);
  EXPECT_EQ(f.get(), 42);
}

TEST(AwsDispatch, StateSurvivesBetweenWarmInvocations) {
  local_lambda server({"--concurrency", "1"});
  auto dispatcher = make_dispatcher(server);
  auto instance = dispatcher.create_instance();
  for (int expected = 1; expected <= 3; ++expected) {
    int served = 0;
    cppless::dispatch(instance, [] { return calls_served_here(); }, served);
    auto [id, stats] = instance.wait_one();
    EXPECT_EQ(served, expected);
    EXPECT_EQ(stats.cold, expected == 1);
  }
}

TEST(AwsDispatch, OversizedPayloadFailsBeforeSending) {
  local_lambda server;
  auto dispatcher = make_dispatcher(server);
  auto instance = dispatcher.create_instance();
  std::vector<char> big(5 << 20, 'x');  // 5 MiB: over 6 MB once in base64
  std::size_t size = 0;
  EXPECT_THROW(cppless::dispatch(instance, [](const std::vector<char>& v) { return v.size(); }, size, big),
               cppless::payload_too_large);
  EXPECT_EQ(instance.pending(), 0u);
  std::vector<char> fits(3 << 20, 'y');
  cppless::dispatch(instance, [](const std::vector<char>& v) { return v.size(); }, size, fits);
  cppless::wait(instance, 1);
  EXPECT_EQ(size, fits.size());
}

TEST(AwsDispatch, ThrottlingAndServiceErrorsAreRetried) {
  local_lambda server;
  auto dispatcher = make_dispatcher(server);
  auto instance = dispatcher.create_instance();
  server.inject(R"({"status":429,"count":3})");
  server.inject(R"({"status":503,"count":2})");
  std::vector<int> out(4);
  for (int i = 0; i < 4; ++i) cppless::dispatch(instance, [](int v) { return v + 1; }, out[i], i);
  cppless::wait(instance, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], i + 1);
  EXPECT_EQ(dispatcher.totals().retries, 5u);
}

TEST(AwsDispatch, ServiceErrorRetriesAreBounded) {
  local_lambda server;
  cppless::aws_options options;
  options.max_attempts = 3;
  auto dispatcher = make_dispatcher(server, options);
  auto instance = dispatcher.create_instance();
  server.inject(R"({"status":503,"count":3})");
  int out = 0;
  cppless::dispatch(instance, [] { return 1; }, out);
  try {
    instance.wait_one();
    FAIL() << "expected aws_error";
  } catch (const cppless::aws_error& e) {
    EXPECT_EQ(e.status(), 503);
    EXPECT_NE(std::string(e.what()).find("gave up after 3 attempts"), std::string::npos) << e.what();
  }
}

// Throttling is retried for as long as the retry deadline allows, not a number of attempts.
TEST(AwsDispatch, ThrottlingIsRetriedUntilTheDeadline) {
  local_lambda server;
  cppless::aws_options options;
  options.max_attempts = 1;  // does not apply to 429
  options.retry_deadline = std::chrono::seconds(60);
  auto dispatcher = make_dispatcher(server, options);
  auto instance = dispatcher.create_instance();
  server.inject(R"({"status":429,"count":3})");
  int out = 0;
  cppless::dispatch(instance, [] { return 1; }, out);
  cppless::wait(instance, 1);
  EXPECT_EQ(out, 1);
  EXPECT_EQ(dispatcher.totals().retries, 3u);

  // Past the deadline: aws_error 429 that says why.
  cppless::aws_options short_deadline;
  short_deadline.retry_deadline = std::chrono::milliseconds(300);
  auto impatient = make_dispatcher(server, short_deadline);
  auto impatient_instance = impatient.create_instance();
  server.inject(R"({"status":429,"count":100000})");
  cppless::dispatch(impatient_instance, [] { return 1; }, out);
  try {
    impatient_instance.wait_one();
    FAIL() << "expected aws_error";
  } catch (const cppless::aws_error& e) {
    EXPECT_EQ(e.status(), 429);
    EXPECT_EQ(e.aws_type(), "TooManyRequestsException");
    EXPECT_NE(std::string(e.what()).find("the retry deadline"), std::string::npos) << e.what();
  }
}

// Lambda's 502s are permanent (and a retry would run the function again): never retried.
TEST(AwsDispatch, BadGatewayIsNotRetried) {
  local_lambda server;
  auto dispatcher = make_dispatcher(server);
  auto instance = dispatcher.create_instance();
  server.inject(R"({"status":502,"count":1})");
  int out = 0;
  cppless::dispatch(instance, [] { return 1; }, out);
  try {
    instance.wait_one();
    FAIL() << "expected aws_error";
  } catch (const cppless::aws_error& e) {
    EXPECT_EQ(e.status(), 502);
  }
  EXPECT_EQ(dispatcher.totals().retries, 0u);
}

// aws_options::qualifier reaches the service: the local server knows only $LATEST.
TEST(AwsDispatch, QualifierIsSent) {
  local_lambda server;
  cppless::aws_options latest;
  latest.qualifier = "$LATEST";
  auto ok = make_dispatcher(server, latest);
  auto ok_instance = ok.create_instance();
  int out = 0;
  cppless::dispatch(ok_instance, [] { return 5; }, out);
  cppless::wait(ok_instance, 1);
  EXPECT_EQ(out, 5);
  cppless::aws_options live;
  live.qualifier = "live";
  auto missing = make_dispatcher(server, live);
  auto missing_instance = missing.create_instance();
  cppless::dispatch(missing_instance, [] { return 5; }, out);
  EXPECT_THROW(missing_instance.wait_one(), cppless::unknown_function);
}

// The issue's case: a function limited to 4 concurrent environments (the server answers 429
// beyond, as Lambda does) and a map of 40 two-second calls sent at once: every call succeeds.
TEST(AwsDispatch, ThrottledMapCompletes) {
  local_lambda server({"--throttle", "--concurrency", "4"});
  auto dispatcher = make_dispatcher(server);
  auto instance = dispatcher.create_instance();
  std::vector<int> out(40);
  for (int i = 0; i < 40; ++i)
    cppless::dispatch(instance, [](int v) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      return v;
    }, out[static_cast<std::size_t>(i)], i);
  cppless::wait(instance, 40);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(out[static_cast<std::size_t>(i)], i);
  EXPECT_EQ(dispatcher.totals().failed, 0u);
  EXPECT_GT(dispatcher.totals().retries, 0u);  // the server did throttle
}

// With the client's cap at the function's concurrency, the server never has to throttle.
TEST(AwsDispatch, ClientSideCapAvoidsThrottling) {
  local_lambda server({"--throttle", "--concurrency", "2"});
  cppless::aws_options options;
  options.max_in_flight_per_function = 2;
  auto dispatcher = make_dispatcher(server, options);
  auto instance = dispatcher.create_instance();
  std::vector<int> out(6);
  for (int i = 0; i < 6; ++i)
    cppless::dispatch(instance, [](int v) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      return v * 2;
    }, out[static_cast<std::size_t>(i)], i);
  cppless::wait(instance, 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[static_cast<std::size_t>(i)], 2 * i);
  EXPECT_EQ(dispatcher.totals().retries, 0u);
  EXPECT_NE(server.stats().find("\"throttled\":0"), std::string::npos) << server.stats();
}

TEST(AwsDispatch, DroppedConnectionIsRetriedOnAFreshOne) {
  local_lambda server;
  auto dispatcher = make_dispatcher(server);
  auto instance = dispatcher.create_instance();
  int warm = 0;
  cppless::dispatch(instance, [] { return 5; }, warm);  // the connection exists before the drop
  cppless::wait(instance, 1);
  server.inject(R"({"drop":true,"count":1})");
  std::vector<int> out(8);
  for (int i = 0; i < 8; ++i) cppless::dispatch(instance, [](int v) { return v * 3; }, out[i], i);
  cppless::wait(instance, 8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], i * 3);
  EXPECT_GE(dispatcher.totals().retries, 1u);
}

TEST(AwsDispatch, MissingFunctionIsUnknownFunction) {
  local_lambda server({}, /*serve_self=*/false);
  auto dispatcher = make_dispatcher(server);
  auto instance = dispatcher.create_instance();
  int out = 0;
  cppless::dispatch(instance, [] { return 1; }, out);
  try {
    instance.wait_one();
    FAIL() << "expected unknown_function";
  } catch (const cppless::unknown_function& e) {
    EXPECT_NE(std::string(e.what()).find("cppless deploy"), std::string::npos) << e.what();
  }
}

TEST(AwsDispatch, StaleFunctionIsRefusedByTheFunction) {
  local_lambda server;
  auto dispatcher = make_dispatcher(server);
  auto instance = dispatcher.create_instance();
  // A call built by "another build": the id of a real entry with another capture layout.
  int out = 0;
  cppless::dispatch(instance, [] { return 1; }, out);
  cppless::wait(instance, 1);
  const cppless::entry* e = nullptr;
  for (auto* candidate : cppless::registry::global().entries())
    if (candidate->name.find("dispatch_test.cpp") != std::string::npos) e = candidate;
  ASSERT_NE(e, nullptr);
  cppless::invocation call;
  call.function_id = e->id_hash;
  call.fingerprint = e->fingerprint ^ 1;
  call.function_name = e->name.c_str();
  call.config = e->config;
  instance.submit(std::move(call), [](std::span<const std::byte>) {});
  EXPECT_THROW(instance.wait_one(), cppless::unknown_function);
}

TEST(AwsDispatch, WrongSecretIsRejectedWithoutLeakingIt) {
  local_lambda server;
  server.export_env();
  ::setenv("AWS_SECRET_ACCESS_KEY", "not-the-secret-value", 1);
  cppless::aws_options options;
  options.function_prefix = "aws-test";
  auto dispatcher = cppless::aws_dispatcher::from_env(options);
  auto instance = dispatcher.create_instance();
  int out = 0;
  cppless::dispatch(instance, [] { return 1; }, out);
  try {
    instance.wait_one();
    FAIL() << "expected aws_error";
  } catch (const cppless::aws_error& e) {
    EXPECT_EQ(e.status(), 403);
    EXPECT_EQ(e.aws_type(), "InvalidSignatureException");
    EXPECT_EQ(std::string(e.what()).find("not-the-secret-value"), std::string::npos);
  }
}

TEST(AwsDispatch, TimeoutAndCrashFailOneCallEach) {
  local_lambda server({"--timeout", "1"});
  auto dispatcher = make_dispatcher(server);
  auto instance = dispatcher.create_instance();
  int slow = 0, crash = 0, fine = 0;
  cppless::dispatch(instance, [] {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    return 1;
  }, slow);
  cppless::dispatch(instance, []() -> int { std::abort(); }, crash);
  int timeouts = 0, crashes = 0;
  for (int i = 0; i < 2; ++i) {
    try {
      instance.wait_one();
    } catch (const cppless::timeout_error&) {
      ++timeouts;
    } catch (const cppless::worker_crashed&) {
      ++crashes;
    }
  }
  EXPECT_EQ(timeouts, 1);
  EXPECT_EQ(crashes, 1);
  cppless::dispatch(instance, [] { return 9; }, fine);
  cppless::wait(instance, 1);
  EXPECT_EQ(fine, 9);
}

}  // namespace

// Temporary credentials from credential_process are fetched again before they expire. The server
// knows only the second key the helper hands out (ASIAREFRESH2): the call succeeds only if the
// client refreshed the first (expiring in a minute) before sending it.
TEST(AwsDispatch, ExpiringProcessCredentialsAreRefreshed) {
  local_lambda server({"--key", "ASIAREFRESH2:second-secret", "--key", "ASIAREFRESH3:third-secret"});
  server.export_env();
  ::unsetenv("AWS_ACCESS_KEY_ID");
  ::unsetenv("AWS_SECRET_ACCESS_KEY");
  const std::string dir = server.dir();
  {
    std::ofstream helper(dir + "/creds.sh");
    helper << "#!/bin/sh\n"
              "n=$(( $(cat " << dir << "/count 2>/dev/null || echo 0) + 1 ))\n"
              "echo $n > " << dir << "/count\n"
              "secret=first-secret; [ $n = 2 ] && secret=second-secret; [ $n -ge 3 ] && secret=third-secret\n"
              "echo \"{\\\"Version\\\": 1, \\\"AccessKeyId\\\": \\\"ASIAREFRESH$n\\\", "
              "\\\"SecretAccessKey\\\": \\\"$secret\\\", \\\"SessionToken\\\": \\\"token$n\\\", "
              "\\\"Expiration\\\": \\\"$(date -u -d '+60 seconds' +%Y-%m-%dT%H:%M:%SZ)\\\"}\"\n";
  }
  ::chmod((dir + "/creds.sh").c_str(), 0755);
  {
    std::ofstream config(dir + "/config");
    config << "[default]\ncredential_process = " << dir << "/creds.sh\n";
  }
  ::setenv("AWS_CONFIG_FILE", (dir + "/config").c_str(), 1);
  cppless::aws_options options;
  options.function_prefix = "aws-test";
  auto dispatcher = cppless::aws_dispatcher::from_env(options);
  auto instance = dispatcher.create_instance();
  int out = 0;
  cppless::dispatch(instance, [](int x) { return x * 2; }, out, 21);
  EXPECT_NO_THROW(instance.wait_one());
  EXPECT_EQ(out, 42);
  EXPECT_EQ(dispatcher.totals().credential_refreshes, 1u);
  ::setenv("AWS_CONFIG_FILE", "/nonexistent", 1);
}
