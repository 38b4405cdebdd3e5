// Invocation traces: one JSON line per finished call with the function, where it ran, its times
// and its bytes; failed calls and futures too; nothing when tracing is off.
#include <cppless/cppless.hpp>
#include <cppless/trace.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

using json = nlohmann::json;

namespace {

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()) + ".jsonl")).string();
}

std::vector<json> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<json> out;
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

using config = cppless::config<cppless::with_memory<256>, cppless::with_timeout<30>>;

}  // namespace

TEST(Trace, OneLinePerCallWithTimesAndBytes) {
  const std::string path = temp_path("cppless-trace");
  cppless::local_options options;
  options.workers = 1;
  cppless::local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();

  cppless::trace::start(path);
  ASSERT_TRUE(cppless::trace::enabled());
  const std::string big(5000, 'x');
  auto echo = [big](int i) { return big.substr(0, static_cast<std::size_t>(i)); };
  std::vector<std::string> out(3);
  for (int i = 0; i < 3; ++i) cppless::dispatch<config>(instance, echo, out[static_cast<std::size_t>(i)], 100 * (i + 1));
  cppless::wait(instance, 3);
  auto failing = [](int) -> int { throw std::runtime_error("deliberate"); };
  int ignored = 0;
  cppless::dispatch(instance, failing, ignored, 1);
  EXPECT_THROW(cppless::wait(instance, 1), cppless::remote_error);
  auto f = cppless::async(instance, [](int k) { return k * 2; }, 21);
  EXPECT_EQ(f.get(), 42);
  cppless::trace::stop();
  EXPECT_FALSE(cppless::trace::enabled());

  const auto lines = read_lines(path);
  std::vector<json> calls;
  int headers = 0;
  for (const json& j : lines) {
    EXPECT_EQ(j.at("v"), cppless::trace::format_version);
    if (j.at("kind") == "process") {
      ++headers;
      EXPECT_EQ(j.at("role"), "host");
    } else {
      calls.push_back(j);
    }
  }
  EXPECT_EQ(headers, 1);
  ASSERT_EQ(calls.size(), 5u);
  int cold = 0;
  std::map<std::string, int> per_function;
  for (const json& c : calls) {
    EXPECT_EQ(c.at("backend"), "local");
    ++per_function[c.at("function").get<std::string>()];
    EXPECT_EQ(c.at("worker").get<int>() > 0, true);
    EXPECT_FALSE(c.at("invocation").get<std::string>().empty());
    const auto submitted = c.at("submitted_unix_ns").get<std::int64_t>();
    const auto started = c.at("started_unix_ns").get<std::int64_t>();
    const auto executed = c.at("executed_unix_ns").get<std::int64_t>();
    EXPECT_LE(submitted, started);
    EXPECT_LE(started, executed);
    EXPECT_GE(c.at("round_trip_ns").get<std::int64_t>(), c.at("execution_ns").get<std::int64_t>());
    EXPECT_GT(c.at("request_bytes").get<std::int64_t>(), 0);
    cold += c.at("cold").get<bool>() ? 1 : 0;
  }
  EXPECT_EQ(cold, 1);  // one worker: only its first call was cold
  // The echo calls: a 5,000-byte capture out, i * 100 bytes (+ length) back, memory from the config.
  int echoes = 0;
  for (const json& c : calls) {
    if (c.at("memory_mb") != 256) continue;
    ++echoes;
    EXPECT_GT(c.at("request_bytes").get<int>(), 5000);
    EXPECT_EQ(c.at("response_bytes").get<int>() % 100, 8);
    EXPECT_TRUE(c.at("ok").get<bool>());
  }
  EXPECT_EQ(echoes, 3);
  int failed = 0;
  for (const json& c : calls)
    if (!c.at("ok").get<bool>()) {
      ++failed;
      EXPECT_NE(c.at("error").get<std::string>().find("deliberate"), std::string::npos);
    }
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(per_function.size(), 3u);  // echo, failing, the async lambda
  std::filesystem::remove(path);
}

TEST(Trace, OffWritesNothing) {
  const std::string path = temp_path("cppless-trace-off");
  cppless::trace::start(path);
  cppless::trace::stop();
  std::filesystem::remove(path);
  cppless::local_options options;
  options.workers = 1;
  cppless::local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();
  EXPECT_EQ(cppless::async(instance, [] { return 1; }).get(), 1);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Trace, UnwritablePathIsAClearError) {
  try {
    cppless::trace::start("/nonexistent-dir/trace.jsonl");
    FAIL() << "no error";
  } catch (const cppless::error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/trace.jsonl"), std::string::npos);
  }
  EXPECT_FALSE(cppless::trace::enabled());
}

TEST(Trace, LeaseLines) {
  const std::string path = temp_path("cppless-trace-lease");
  cppless::trace::record_lease("before-start", 1024, std::chrono::seconds(1), std::chrono::seconds(1));  // off: nothing
  cppless::trace::start(path);
  cppless::trace::record_lease("L\"1", 2048, std::chrono::seconds(10), std::chrono::milliseconds(1500));
  cppless::trace::stop();
  const auto lines = read_lines(path);
  int leases = 0;
  for (const json& j : lines) {
    if (j.at("kind") != "lease") continue;
    ++leases;
    EXPECT_EQ(j.at("lease"), "L\"1");
    EXPECT_EQ(j.at("memory_mb"), 2048);
    EXPECT_EQ(j.at("allocated_ns").get<std::int64_t>(), 10'000'000'000);
    EXPECT_EQ(j.at("hot_poll_ns").get<std::int64_t>(), 1'500'000'000);
  }
  EXPECT_EQ(leases, 1);
  std::filesystem::remove(path);
}
