// The function side: inside Lambda (AWS_LAMBDA_RUNTIME_API set) the same executable runs the
// custom-runtime loop of the Lambda Runtime API instead of main:
//
//   GET  /2018-06-01/runtime/invocation/next              -> event + request id + deadline
//   POST /2018-06-01/runtime/invocation/{id}/response     -> the cppless response envelope
//   POST /2018-06-01/runtime/invocation/{id}/error        -> a function error (errorType/Message)
//   POST /2018-06-01/runtime/init/error                   -> this build cannot serve the function
//
// Calls run on one long-lived thread (thread-locals and statics persist between invocations,
// as Lambda keeps the process warm) while the loop thread watches the deadline: a call that
// would overrun it is reported as cppless.Timeout just before Lambda's own limit, then the
// process exits so Lambda starts a fresh one (the stuck call cannot be cancelled).
#include "runtime.hpp"

#include "wire.hpp"

#include <cppless/entry.hpp>
#include <cppless/error.hpp>

#include <curl/curl.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace cppless::aws {

namespace {

struct next_event {
  std::string request_id, trace_id, body;
  long long deadline_ms = 0;  // Unix epoch milliseconds
};

bool read_header(std::string_view line, std::string_view name, std::string& value) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != std::tolower(static_cast<unsigned char>(name[i])))
      return false;
  std::string_view v = line.substr(name.size() + 1);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
  value.assign(v);
  return true;
}

// The Runtime API over one keep-alive HTTP/1.1 connection (what the Lambda endpoint speaks).
class runtime_api {
 public:
  explicit runtime_api(const std::string& host) : base_("http://" + host + "/2018-06-01/runtime") {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    easy_ = curl_easy_init();
  }
  ~runtime_api() { curl_easy_cleanup(easy_); }

  // Blocks until Lambda hands out the next invocation; false if the API is gone.
  bool next(next_event& ev) {
    ev = {};
    std::string deadline;
    headers_ = [&](std::string_view line) {
      read_header(line, "Lambda-Runtime-Aws-Request-Id", ev.request_id) ||
          read_header(line, "Lambda-Runtime-Trace-Id", ev.trace_id) ||
          read_header(line, "Lambda-Runtime-Deadline-Ms", deadline);
    };
    long status = request("GET", base_ + "/invocation/next", nullptr, {}, &ev.body);
    headers_ = nullptr;
    if (status != 200 || ev.request_id.empty()) return false;
    ev.deadline_ms = std::atoll(deadline.c_str());
    return true;
  }

  long respond(const std::string& id, const std::string& body) {
    return request("POST", base_ + "/invocation/" + id + "/response", nullptr, body, nullptr);
  }
  long fail(const std::string& id, const std::string& type, const std::string& message) {
    return request("POST", base_ + "/invocation/" + id + "/error", type.c_str(), wire::encode_error(type, message), nullptr);
  }
  long init_error(const std::string& type, const std::string& message) {
    return request("POST", base_ + "/init/error", type.c_str(), wire::encode_error(type, message), nullptr);
  }

 private:
  static std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
    if (auto* out = static_cast<std::string*>(user)) out->append(data, size * n);
    return size * n;
  }
  static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
    auto* self = static_cast<runtime_api*>(user);
    if (self->headers_) self->headers_(std::string_view(data, size * n));
    return size * n;
  }

  long request(const char* method, const std::string& url, const char* error_type, const std::string& body,
               std::string* response) {
    curl_easy_reset(easy_);
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    headers = curl_slist_append(headers, "Expect:");
    if (error_type) headers = curl_slist_append(headers, ("Lambda-Runtime-Function-Error-Type: " + std::string(error_type)).c_str());
    curl_easy_setopt(easy_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy_, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy_, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &on_body);
    curl_easy_setopt(easy_, CURLOPT_WRITEDATA, response);
    curl_easy_setopt(easy_, CURLOPT_HEADERFUNCTION, &on_header);
    curl_easy_setopt(easy_, CURLOPT_HEADERDATA, this);
    if (std::strcmp(method, "POST") == 0) {
      curl_easy_setopt(easy_, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(easy_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    }
    const CURLcode rc = curl_easy_perform(easy_);
    long status = 0;
    if (rc == CURLE_OK) curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
    else std::fprintf(stderr, "cppless runtime: %s %s: %s\n", method, url.c_str(), curl_easy_strerror(rc));
    curl_slist_free_all(headers);
    return status;
  }

  std::string base_;
  CURL* easy_ = nullptr;
  std::function<void(std::string_view)> headers_;
};

// The thread calls run on, kept for the process' life (state persists between invocations).
class call_thread {
 public:
  call_thread() : thread_([this] { loop(); }) { thread_.detach(); }

  // Runs `request` on the call thread; returns the result, or nothing if `deadline` passed first.
  std::optional<protocol::served> run(wire::request&& request, std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    job_ = std::move(request);
    result_.reset();
    has_job_ = true;
    wake_.notify_all();
    if (!done_.wait_until(lock, deadline, [this] { return result_.has_value(); })) return std::nullopt;
    return std::move(result_);
  }

 private:
  void loop() {
    for (;;) {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return has_job_; });
      has_job_ = false;
      wire::request job = std::move(job_);
      lock.unlock();
      protocol::served out = protocol::serve_call(job.function_id, job.fingerprint, job.payload.span());
      lock.lock();
      result_ = std::move(out);
      done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  bool has_job_ = false;
  wire::request job_;
  std::optional<protocol::served> result_;
  std::thread thread_;
};

int serve_runtime(const std::string& host) {
  runtime_api api(host);
  // A deployment names the entry it serves: a build without it cannot serve anything here.
  if (const char* id = std::getenv("CPPLESS_FUNCTION_ID"); id && *id) {
    const auto hash = std::strtoull(id, nullptr, 16);
    if (!registry::global().find(hash)) {
      api.init_error(wire::unknown_function_type,
                     std::string("cppless runtime: this executable has no function with id hash ") + id +
                         " (the deployed code is from another build); redeploy with `cppless deploy`");
      return 1;
    }
  }
  call_thread calls;
  bool cold = true;
  next_event ev;
  while (api.next(ev)) {
    if (!ev.trace_id.empty()) ::setenv("_X_AMZN_TRACE_ID", ev.trace_id.c_str(), 1);
    const auto started = std::chrono::steady_clock::now();
    // Lambda's deadline is wall-clock; turn it into the steady clock the wait uses, and report
    // a little before it so our message, not the platform's kill, tells the caller.
    const long long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    long long budget_ms = ev.deadline_ms ? ev.deadline_ms - now_ms : 900'000;
    budget_ms -= std::min(50LL, budget_ms / 20);
    wire::request request;
    try {
      request = wire::decode_request(ev.body);
    } catch (const std::exception& e) {
      api.fail(ev.request_id, wire::decode_error_type, e.what());
      continue;
    }
    if (budget_ms <= 0) {
      api.fail(ev.request_id, wire::timeout_type, "cppless runtime: the invocation's deadline had passed on arrival");
      continue;
    }
    const bool was_cold = cold;
    cold = false;
    auto result = calls.run(std::move(request), started + std::chrono::milliseconds(budget_ms));
    if (!result) {
      api.fail(ev.request_id, wire::timeout_type,
               "cppless runtime: the function did not finish within its Lambda timeout (" +
                   std::to_string(budget_ms) + " ms left at start); the execution environment is restarted");
      std::fflush(nullptr);
      std::_Exit(1);
    }
    const auto exec_ns =
        static_cast<std::uint64_t>(std::chrono::nanoseconds(std::chrono::steady_clock::now() - started).count());
    if (result->code == protocol::status::ok) {
      const long status = api.respond(ev.request_id, wire::encode_response(result->result.span(), was_cold, exec_ns));
      if (status == 413)
        api.fail(ev.request_id, "Function.ResponseSizeTooLarge",
                 "cppless runtime: the result (" + std::to_string(result->result.size()) +
                     " bytes before base64) exceeds Lambda's response limit");
    } else {
      const std::string type =
          result->code == protocol::status::remote_exception ? result->error_type : wire::error_type(result->code);
      api.fail(ev.request_id, type, result->error_message);
    }
  }
  return 0;
}

}  // namespace

std::optional<int> runtime_mode(int, char**) {
  const char* api = std::getenv("AWS_LAMBDA_RUNTIME_API");
  if (!api || !*api) return std::nullopt;
  return serve_runtime(api);
}

}  // namespace cppless::aws
