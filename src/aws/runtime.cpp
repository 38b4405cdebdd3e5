// The function side: inside Lambda (AWS_LAMBDA_RUNTIME_API set) the same executable runs the
// custom-runtime loop of the Lambda Runtime API instead of main:
//
//   GET  /2018-06-01/runtime/invocation/next              -> event + request id + deadline
//   POST /2018-06-01/runtime/invocation/{id}/response     -> the cppless response envelope
//   POST /2018-06-01/runtime/invocation/{id}/error        -> a function error (errorType/Message)
//   POST /2018-06-01/runtime/init/error                   -> this build cannot serve the function
//
// AWS_LAMBDA_MAX_CONCURRENCY pollers (1 unless Lambda sets it) each run that loop on their own
// long-lived thread and connection, so statics and thread-locals persist between warm calls.
// Timeouts are Lambda's (Sandbox.Timedout): a call runs until it returns or the platform stops
// the environment, and each invocation is reported exactly once. A Runtime API that fails
// (5xx, a dropped connection, a reply without a request id) is retried briefly; then the process
// exits non-zero with the reason on stderr, which Lambda reports as Runtime.ExitError — it never
// waits forever on a dead API.
#include "runtime.hpp"

#include "runtime_http.hpp"
#include "wire.hpp"

#include <cppless/entry.hpp>
#include <cppless/error.hpp>

#include <atomic>
#include <charconv>
#include <chrono>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace cppless::aws {

namespace {

constexpr const char* api_root = "/2018-06-01/runtime";
// A failing Runtime API call is tried this many times (50 ms, 200 ms, 800 ms apart) before the
// runtime gives up: long enough for a hiccup, short against any function timeout.
constexpr int api_attempts = 4;
// Posts are answered at once by a healthy Runtime API; a reply later than this is a failure.
constexpr std::chrono::milliseconds post_limit{10'000};

struct next_event {
  std::string request_id, trace_id, body;
  long long deadline_ms = 0;  // Unix epoch milliseconds
};

[[noreturn]] void give_up(const std::string& why) {
  std::fprintf(stderr, "cppless runtime: %s; exiting\n", why.c_str());
  std::fflush(nullptr);
  std::_Exit(1);  // other pollers may be blocked in a long poll: no destructors, no joins
}

// One poller's view of the Runtime API over its own keep-alive connection.
class runtime_api {
 public:
  explicit runtime_api(const std::string& host) : conn_(host) {}

  // Tries `attempt` (which returns a value, or nothing with `why` set) a few times.
  template <class F>
  auto with_retries(const std::string& what, F&& attempt) {
    std::string why;
    auto pause = std::chrono::milliseconds(50);
    for (int i = 0; i < api_attempts; ++i) {
      if (i > 0) {
        std::this_thread::sleep_for(pause);
        pause *= 4;
      }
      try {
        if (auto out = attempt(why)) return std::move(*out);
      } catch (const runtime_http_error& e) {
        why = e.what();
      }
    }
    give_up("the Runtime API failed " + std::to_string(api_attempts) + " times on " + what + " (last: " + why + ")");
  }


  // The next invocation. Gives up (exits) when the API keeps failing.
  next_event next() {
    return with_retries("GET /invocation/next", [&](std::string& why) -> std::optional<next_event> {
      http_reply r = conn_.request("GET", std::string(api_root) + "/invocation/next", {}, {}, {});
      if (r.status != 200) {
        why = "HTTP " + std::to_string(r.status);
        return std::nullopt;
      }
      next_event ev;
      if (const auto* id = r.header("Lambda-Runtime-Aws-Request-Id")) ev.request_id = *id;
      if (ev.request_id.empty() || ev.request_id.find_first_of("/?# \r\n") != std::string::npos) {
        why = "a reply without a valid Lambda-Runtime-Aws-Request-Id";
        return std::nullopt;
      }
      if (const auto* t = r.header("Lambda-Runtime-Trace-Id")) ev.trace_id = *t;
      if (const auto* d = r.header("Lambda-Runtime-Deadline-Ms")) ev.deadline_ms = std::atoll(d->c_str());
      ev.body = std::move(r.body);
      return ev;
    });
  }

  // Posts a response or error; returns the status (2xx accepted, 4xx refused: logged by the
  // caller). 5xx and I/O failures are retried, then the runtime gives up.
  int post(const std::string& path, const std::string& body, const char* error_type = nullptr) {
    std::vector<std::pair<std::string, std::string>> headers{{"Content-Type", "application/json"}};
    if (error_type) headers.emplace_back("Lambda-Runtime-Function-Error-Type", error_type);
    return with_retries("POST " + path, [&](std::string& why) -> std::optional<int> {
      const http_reply r = conn_.request("POST", api_root + path, headers, body, post_limit);
      if (r.status >= 500) {
        why = "HTTP " + std::to_string(r.status);
        return std::nullopt;
      }
      return r.status;
    });
  }

  int respond(const std::string& id, const std::string& body) { return post("/invocation/" + id + "/response", body); }
  int fail(const std::string& id, const std::string& type, const std::string& message) {
    return post("/invocation/" + id + "/error", wire::encode_error(type, message), type.c_str());
  }
  int init_error(const std::string& type, const std::string& message) {
    return post("/init/error", wire::encode_error(type, message), type.c_str());
  }

 private:
  runtime_connection conn_;
};

std::atomic<bool> first_call{true};

void serve_one(runtime_api& api, const next_event& ev, bool set_trace_env) {
  // The X-Ray trace id of this call, or none: never the previous call's.
  if (set_trace_env) {
    if (ev.trace_id.empty()) ::unsetenv("_X_AMZN_TRACE_ID");
    else ::setenv("_X_AMZN_TRACE_ID", ev.trace_id.c_str(), 1);
  }
  const auto started = std::chrono::steady_clock::now();
  wire::request request;
  try {
    request = wire::decode_request(ev.body);
  } catch (const std::exception& e) {
    api.fail(ev.request_id, wire::decode_error_type, e.what());
    return;
  }
  const long long now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (ev.deadline_ms && ev.deadline_ms <= now_ms) {
    api.fail(ev.request_id, wire::timeout_type, "cppless runtime: the invocation's deadline had passed on arrival");
    return;
  }
  const bool was_cold = first_call.exchange(false);
  const protocol::served result = protocol::serve_call(request.function_id, request.fingerprint, request.payload.span());
  const auto exec_ns =
      static_cast<std::uint64_t>(std::chrono::nanoseconds(std::chrono::steady_clock::now() - started).count());
  int status = 0;
  if (result.code == protocol::status::ok) {
    status = api.respond(ev.request_id, wire::encode_response(result.result.span(), was_cold, exec_ns));
    if (status == 413)
      status = api.fail(ev.request_id, "Function.ResponseSizeTooLarge",
                        "cppless runtime: the result (" + std::to_string(result.result.size()) +
                            " bytes before base64) exceeds Lambda's response limit");
  } else {
    const std::string type =
        result.code == protocol::status::remote_exception ? result.error_type : wire::error_type(result.code);
    status = api.fail(ev.request_id, type, result.error_message);
  }
  // Refused (e.g. the invocation timed out meanwhile): Lambda has reported it; say so and go on.
  if (status < 200 || status >= 300)
    std::fprintf(stderr, "cppless runtime: the Runtime API refused the report of %s (HTTP %d)\n", ev.request_id.c_str(),
                 status);
}

[[noreturn]] void poll_forever(const std::string& host, bool set_trace_env) {
  try {
    runtime_api api(host);
    for (;;) serve_one(api, api.next(), set_trace_env);
  } catch (const std::exception& e) {
    give_up(e.what());
  }
}

// AWS_LAMBDA_MAX_CONCURRENCY: how many invocations Lambda may hand this environment at once.
int poller_count() {
  const char* text = std::getenv("AWS_LAMBDA_MAX_CONCURRENCY");
  if (!text || !*text) return 1;
  int n = 0;
  const char* end = text + std::char_traits<char>::length(text);
  const auto [stop, ec] = std::from_chars(text, end, n);
  if (ec != std::errc{} || stop != end || n < 1 || n > 1024)
    give_up(std::string("AWS_LAMBDA_MAX_CONCURRENCY='") + text + "' is not a number from 1 to 1024");
  return n;
}

int serve_runtime(const std::string& host) {
  const int pollers = poller_count();
  // A deployment names the entry it serves: a build without it cannot serve anything here.
  if (const char* id = std::getenv("CPPLESS_FUNCTION_ID"); id && *id) {
    const auto hash = std::strtoull(id, nullptr, 16);
    if (!registry::global().find(hash)) {
      try {
        runtime_api(host).init_error(wire::unknown_function_type,
                                     std::string("cppless runtime: this executable has no function with id hash ") +
                                         id + " (the deployed code is from another build); redeploy with `cppless deploy`");
      } catch (const std::exception& e) {
        give_up(e.what());
      }
      return 1;
    }
  }
  // With several pollers the process environment cannot hold one call's trace id.
  const bool set_trace_env = pollers == 1;
  std::vector<std::thread> others;
  for (int i = 1; i < pollers; ++i) others.emplace_back([&host, set_trace_env] { poll_forever(host, set_trace_env); });
  poll_forever(host, set_trace_env);  // never returns: the process ends through give_up or Lambda
}

}  // namespace

std::optional<int> runtime_mode(int, char**) {
  const char* api = std::getenv("AWS_LAMBDA_RUNTIME_API");
  if (!api || !*api) return std::nullopt;
  return serve_runtime(api);
}

}  // namespace cppless::aws
