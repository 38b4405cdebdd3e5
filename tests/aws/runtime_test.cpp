// The Lambda runtime loop against a scripted Runtime API (a small HTTP/1.1 server in this test):
// it never hangs and never reports twice. The test binary itself is the function: started with
// AWS_LAMBDA_RUNTIME_API set, cppless' worker mode runs the runtime loop before main.
#include "runtime_http.hpp"
#include "wire.hpp"

#include <cppless/aws.hpp>
#include <cppless/entry.hpp>

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <fcntl.h>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using namespace std::chrono_literals;
using cppless::aws::http_reply;

// Two functions of this binary, registered by hand so the test can write their requests.
constexpr std::uint64_t trace_echo_id = 0x7e57000000000001ull;
constexpr std::uint64_t concurrency_probe_id = 0x7e57000000000002ull;
std::atomic<int> in_flight{0};

void append(cppless::byte_buffer& out, const std::string& s) {
  out.append(s.data(), s.size());
}

[[maybe_unused]] const bool registered = [] {
  cppless::entry echo;
  echo.id = "runtime_test:trace_echo";
  echo.name = echo.id;
  echo.id_hash = trace_echo_id;
  echo.invoke = [](std::span<const std::byte>, cppless::byte_buffer& result) {
    const char* trace = std::getenv("_X_AMZN_TRACE_ID");
    append(result, trace ? trace : "<none>");
  };
  cppless::registry::global().add(std::move(echo));
  // Waits (bounded) until three calls run at once in this process; answers how many it saw.
  cppless::entry probe;
  probe.id = "runtime_test:concurrency_probe";
  probe.name = probe.id;
  probe.id_hash = concurrency_probe_id;
  probe.invoke = [](std::span<const std::byte>, cppless::byte_buffer& result) {
    int seen = ++in_flight;
    const auto until = std::chrono::steady_clock::now() + 10s;
    while ((seen = in_flight.load()) < 3 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
    append(result, std::to_string(seen));
    std::this_thread::sleep_for(50ms);  // let the others see three too before any leaves
    --in_flight;
  };
  cppless::registry::global().add(std::move(probe));
  return true;
}();

// Links aws_dispatcher.cpp, which registers the Lambda runtime as a worker mode.
[[gnu::used]] auto* keep_runtime = &cppless::aws_dispatcher::from_env;

struct seen_request {
  std::string method, path, body;
  std::string error_type;  // Lambda-Runtime-Function-Error-Type
};

// A Runtime API whose answers the test scripts: `answer` gets each request and returns the raw
// reply ("" closes the connection without one; nullopt keeps the request waiting until stop).
class fake_runtime_api {
 public:
  using script = std::function<std::optional<std::string>(const seen_request&, int index)>;
  explicit fake_runtime_api(script answer) : answer_(std::move(answer)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("fake Runtime API: cannot listen");
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~fake_runtime_api() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    acceptor_.join();
    for (auto& t : connections_) t.join();
    ::close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::vector<seen_request> requests() {
    std::lock_guard lock(mutex_);
    return seen_;
  }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      connections_.emplace_back([this, c] { serve(c); });
    }
  }
  void serve(int c) {
    std::string buffer;
    while (!stop_) {
      const std::size_t head_end = buffer.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        seen_request r;
        const std::string head = buffer.substr(0, head_end);
        r.method = head.substr(0, head.find(' '));
        r.path = head.substr(r.method.size() + 1, head.find(' ', r.method.size() + 1) - r.method.size() - 1);
        std::size_t length = 0;
        if (auto p = head.find("Content-Length: "); p != std::string::npos) length = std::stoul(head.substr(p + 16));
        if (auto p = head.find("Lambda-Runtime-Function-Error-Type: "); p != std::string::npos)
          r.error_type = head.substr(p + 36, head.find("\r\n", p) - p - 36);
        if (buffer.size() >= head_end + 4 + length) {
          r.body = buffer.substr(head_end + 4, length);
          buffer.erase(0, head_end + 4 + length);
          int index;
          {
            std::lock_guard lock(mutex_);
            index = static_cast<int>(seen_.size());
            seen_.push_back(r);
          }
          std::optional<std::string> reply = answer_(r, index);
          while (!reply && !stop_) std::this_thread::sleep_for(5ms);  // held until the test ends
          if (!reply || reply->empty()) break;
          ::send(c, reply->data(), reply->size(), MSG_NOSIGNAL);
          continue;
        }
      }
      pollfd p{c, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char chunk[65536];
      const ssize_t n = ::recv(c, chunk, sizeof chunk, 0);
      if (n <= 0) break;
      buffer.append(chunk, static_cast<std::size_t>(n));
    }
    ::close(c);
  }

  script answer_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::vector<std::thread> connections_;  // joined at the end (the acceptor alone adds to it)
  std::mutex mutex_;
  std::vector<seen_request> seen_;
};

std::string reply(int status, const std::string& body = {}, const std::string& headers = {}) {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         headers + "\r\n" + body;
}

std::string event(const std::string& id, const std::string& body, const std::string& trace = {}) {
  std::string headers = "Lambda-Runtime-Aws-Request-Id: " + id + "\r\nLambda-Runtime-Deadline-Ms: 99999999999999\r\n";
  if (!trace.empty()) headers += "Lambda-Runtime-Trace-Id: " + trace + "\r\n";
  return reply(200, body, headers);
}

std::string call_of(std::uint64_t id) { return cppless::aws::wire::encode_request(id, 0, {}); }

struct exit_result {
  int code = -1;  // exit status; -1 if it had to be killed
  std::string err;
};

// Runs this binary as the function against `api`; kills it (and fails) after `limit`.
exit_result run_function(const std::string& api, std::vector<std::string> extra_env = {},
                         std::chrono::seconds limit = 30s) {
  std::vector<std::string> env_strings = {"AWS_LAMBDA_RUNTIME_API=" + api, "PATH=/usr/bin:/bin"};
  for (auto& e : extra_env) env_strings.push_back(e);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  int err[2];
  EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::string self = "/proc/self/exe";
  char* argv[] = {self.data(), nullptr};
  pid_t pid;
  EXPECT_EQ(posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  ::close(err[1]);
  exit_result out;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  for (;;) {
    pollfd p{err[0], POLLIN, 0};
    if (::poll(&p, 1, 20) > 0) {
      char buf[4096];
      const ssize_t n = ::read(err[0], buf, sizeof buf);
      if (n > 0) out.err.append(buf, static_cast<std::size_t>(n));
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ::close(err[0]);
      ADD_FAILURE() << "the runtime did not exit within " << limit.count() << " s (it hangs); stderr:\n" << out.err;
      return out;
    }
  }
  for (char buf[4096]; ;) {
    const ssize_t n = ::read(err[0], buf, sizeof buf);
    if (n <= 0) break;
    out.err.append(buf, static_cast<std::size_t>(n));
  }
  ::close(err[0]);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out;
}

TEST(Runtime, ExitsWithAMessageWhenTheApiKeepsAnswering5xx) {
  fake_runtime_api api([](const seen_request&, int) { return reply(500, "{}"); });
  const auto r = run_function(api.address());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("failed 4 times on GET /invocation/next (last: HTTP 500)"), std::string::npos) << r.err;
  EXPECT_EQ(api.requests().size(), 4u);  // brief retries, then the end
}

TEST(Runtime, ExitsWithAMessageWhenTheApiDropsTheConnection) {
  fake_runtime_api api([](const seen_request&, int) { return std::string(); });
  const auto r = run_function(api.address());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("closed the connection"), std::string::npos) << r.err;
}

TEST(Runtime, ExitsWithAMessageWhenTheEventHasNoRequestId) {
  fake_runtime_api api([](const seen_request&, int) { return reply(200, call_of(trace_echo_id)); });
  const auto r = run_function(api.address());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("without a valid Lambda-Runtime-Aws-Request-Id"), std::string::npos) << r.err;
  for (const auto& q : api.requests()) EXPECT_EQ(q.path, "/2018-06-01/runtime/invocation/next");  // nothing reported
}

TEST(Runtime, ExitsWhenNoApiListens) {
  // A port nobody listens on (bound, never listening).
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const auto r = run_function("127.0.0.1:" + std::to_string(ntohs(a.sin_port)));
  ::close(fd);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot connect to the Runtime API"), std::string::npos) << r.err;
}

TEST(Runtime, ReportsEachInvocationOnceAndClearsAnAbsentTraceId) {
  // Three events (with, without, with a trace id), then a failing API ends the process.
  fake_runtime_api api([](const seen_request& q, int) -> std::optional<std::string> {
    static std::atomic<int> events{0};
    if (q.method == "POST") return reply(202, "{\"status\":\"OK\"}");
    switch (events++) {
      case 0: return event("id-0", call_of(trace_echo_id), "Root=1-aaaa;Sampled=0");
      case 1: return event("id-1", call_of(trace_echo_id));
      case 2: return event("id-2", call_of(trace_echo_id), "Root=1-cccc;Sampled=1");
      default: return reply(500);
    }
  });
  const auto r = run_function(api.address());
  EXPECT_EQ(r.code, 1) << r.err;
  std::vector<std::string> traces;
  for (const auto& q : api.requests()) {
    if (q.method != "POST") continue;
    EXPECT_EQ(q.path, "/2018-06-01/runtime/invocation/id-" + std::to_string(traces.size()) + "/response");
    const auto response = cppless::aws::wire::decode_response(q.body);
    traces.emplace_back(reinterpret_cast<const char*>(response.result.data()), response.result.size());
  }
  EXPECT_EQ(traces, (std::vector<std::string>{"Root=1-aaaa;Sampled=0", "<none>", "Root=1-cccc;Sampled=1"}));
}

TEST(Runtime, AReportAnswered5xxIsRetriedThenTheProcessEnds) {
  fake_runtime_api api([](const seen_request& q, int) -> std::optional<std::string> {
    if (q.method == "POST") return reply(503);
    return event("only", "not json");
  });
  const auto r = run_function(api.address());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("on POST /invocation/only/error (last: HTTP 503)"), std::string::npos) << r.err;
  int posts = 0;
  for (const auto& q : api.requests()) posts += q.method == "POST";
  EXPECT_EQ(posts, 4);
  EXPECT_EQ(api.requests().back().error_type, "cppless.DecodeError");
}

TEST(Runtime, HonoursMaxConcurrency) {
  // Three events handed out at once; further polls wait. Each call answers how many calls it
  // saw running together: three pollers let all three meet.
  std::mutex m;
  std::condition_variable cv;
  int responses = 0;
  fake_runtime_api api([&](const seen_request& q, int) -> std::optional<std::string> {
    static std::atomic<int> events{0};
    if (q.method == "POST") {
      std::lock_guard lock(m);
      ++responses;
      cv.notify_all();
      return reply(202);
    }
    const int n = events++;
    if (n < 3) return event("c" + std::to_string(n), call_of(concurrency_probe_id));
    {
      std::unique_lock lock(m);
      cv.wait_for(lock, 20s, [&] { return responses == 3; });
    }
    return reply(500);  // then end the process
  });
  const auto r = run_function(api.address(), {"AWS_LAMBDA_MAX_CONCURRENCY=3"});
  EXPECT_EQ(r.code, 1) << r.err;
  int seen_three = 0;
  for (const auto& q : api.requests()) {
    if (q.method != "POST") continue;
    const auto response = cppless::aws::wire::decode_response(q.body);
    seen_three += std::string(reinterpret_cast<const char*>(response.result.data()), response.result.size()) == "3";
  }
  EXPECT_EQ(seen_three, 3);
}

TEST(Runtime, RefusesAMalformedMaxConcurrency) {
  fake_runtime_api api([](const seen_request&, int) -> std::optional<std::string> { return reply(500); });
  const auto r = run_function(api.address(), {"AWS_LAMBDA_MAX_CONCURRENCY=lots"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("AWS_LAMBDA_MAX_CONCURRENCY='lots' is not a number"), std::string::npos) << r.err;
  EXPECT_TRUE(api.requests().empty());
}

// The reply parser takes Content-Length and chunked bodies and refuses malformed replies.
TEST(RuntimeHttp, ParsesRepliesAndRefusesMalformedOnes) {
  http_reply r;
  EXPECT_EQ(cppless::aws::parse_http_reply("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", r), 0u);
  const std::string full = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello";
  EXPECT_EQ(cppless::aws::parse_http_reply(full + "HTTP/1.1", r), full.size());
  EXPECT_EQ(r.body, "hello");
  ASSERT_NE(r.header("x-a"), nullptr);
  EXPECT_EQ(*r.header("x-a"), "b");
  const std::string chunked = "HTTP/1.1 202 A\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
  EXPECT_EQ(cppless::aws::parse_http_reply(chunked, r), chunked.size());
  EXPECT_EQ(r.body, "abcde");
  for (const char* bad : {"HTTP/1.1 2x0 OK\r\n\r\n", "SMTP 220\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n", "HTTP/1.1 200 OK\r\nnocolon\r\n\r\n",
                          "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"})
    EXPECT_THROW(cppless::aws::parse_http_reply(bad, r), cppless::aws::runtime_http_error) << bad;
}

}  // namespace
