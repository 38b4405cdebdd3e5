#include "invoke_client.hpp"

#include "wire.hpp"

#include <cppless/aws/naming.hpp>
#include <cppless/base64.hpp>
#include <cppless/entry.hpp>
#include <cppless/error.hpp>

#include <curl/curl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <unistd.h>

namespace cppless::aws {

// One call from submit() to its completion. Touched by one thread at a time: the submitter
// until it is in the inbox, then the I/O thread, then (from the outbox) progress().
struct pending_call {
  backend::completion done;
  invoke_target* target = nullptr;
  bool holds_slot = false;  // counted in target->in_flight
  std::string function_name;  // readable entry name, for messages
  std::string body;
  long timeout_ms = 0;
  clock::time_point submitted;
  clock::time_point due;  // when a retry may go out
  unsigned attempt = 0;

  easy_handle easy;  // while a request is out (from the client's pool of handles)
  std::string response, request_id, function_error, error_type, log_result;
  outcome result;

};

namespace {

constexpr std::size_t max_response = std::size_t{16} << 20;  // Lambda caps responses at 6 MB

void global_init() {
  static const bool done = [] {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    return true;
  }();
  (void)done;
}

std::string executable_name() {
  char path[4096];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "cppless";
  std::string p(path, static_cast<std::size_t>(n));
  return p.substr(p.rfind('/') + 1);
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* call = static_cast<pending_call*>(user);
  const std::size_t n = size * count;
  if (call->response.size() + n > max_response) return 0;  // aborts the transfer
  call->response.append(data, n);
  return n;
}

bool header_is(std::string_view line, std::string_view name, std::string& value) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
  std::string_view v = line.substr(name.size() + 1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
  value.assign(v);
  return true;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* call = static_cast<pending_call*>(user);
  const std::string_view line(data, size * count);
  header_is(line, "x-amzn-requestid", call->request_id) || header_is(line, "x-amz-function-error", call->function_error) ||
      header_is(line, "x-amz-log-result", call->log_result) || header_is(line, "x-amzn-errortype", call->error_type);
  return size * count;
}

// "REPORT RequestId: ... Duration: 1.2 ms Billed Duration: 2 ms ... Init Duration: 30 ms"
void read_log_tail(const std::string& encoded, call_stats& stats, std::uint64_t& billed_ms, bool& saw_init) {
  std::string log;
  try {
    const byte_buffer bytes = base64_decode(encoded);
    log.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  } catch (const std::exception&) {
    return;
  }
  const auto report = log.rfind("REPORT RequestId:");
  if (report == std::string::npos) return;
  const std::string_view line = std::string_view(log).substr(report, log.find('\n', report) - report);
  if (auto at = line.find("Billed Duration: "); at != std::string_view::npos)
    billed_ms = std::strtoull(line.data() + at + 17, nullptr, 10);
  saw_init = line.find("Init Duration:") != std::string_view::npos;
  (void)stats;
}

bool is_connection_error(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_COULDNT_RESOLVE_HOST:
      return true;
    default:
      return false;
  }
}

// The service's error type and message from an error response ({"Type":..,"message":..} or
// {"__type":..,"Message":..}), for messages. Never contains credentials: the service does not
// echo them, and the request is not quoted.
std::pair<std::string, std::string> service_error(const pending_call& c) {
  std::string type = c.error_type, message;
  if (auto colon = type.find(':'); colon != std::string::npos) type.resize(colon);
  // A tiny scan instead of a JSON parser: these bodies are small, flat and only for messages.
  auto field = [&](const char* key) -> std::string {
    const std::string quoted = std::string("\"") + key + "\"";
    auto at = c.response.find(quoted);
    if (at == std::string::npos) return {};
    at = c.response.find('"', c.response.find(':', at + quoted.size()) + 1);
    if (at == std::string::npos) return {};
    auto end = c.response.find('"', at + 1);
    return end == std::string::npos ? std::string() : c.response.substr(at + 1, end - at - 1);
  };
  if (type.empty()) type = field("Type");
  if (type.empty()) type = field("__type");
  message = field("message");
  if (message.empty()) message = field("Message");
  if (message.empty()) message = c.response.substr(0, 200);
  return {type, message};
}

}  // namespace

invoke_client::invoke_client(const aws_options& options) : options_(options) {
  global_init();
  const settings& s = options_.settings;
  if (s.region.empty() || s.endpoint.empty() || s.creds.access_key_id.empty())
    throw error("cppless aws: dispatcher without region, endpoint or credentials (use aws_dispatcher::from_env())");
  prefix_ = options_.function_prefix.empty() ? executable_name() : options_.function_prefix;
  sigv4_ = "aws:amz:" + s.region + ":lambda";
  creds_ = s.creds;
  creds_expire_ = creds_.expires();
  options_.connections = std::max(1u, options_.connections);
  // HTTPS negotiates HTTP/2 by ALPN, as with Lambda itself. Plain http:// endpoints (local
  // servers) would need h2c with prior knowledge, whose connection reuse is broken before
  // libcurl 7.89 (curl issue #10634): there, HTTP/1.1 it is.
  const bool tls = s.endpoint.rfind("https://", 0) == 0;
  const bool h2c_works = curl_version_info(CURLVERSION_NOW)->version_num >= 0x075900;
  http_version_ = !options_.http2 ? CURL_HTTP_VERSION_1_1
                  : tls           ? CURL_HTTP_VERSION_2TLS
                  : h2c_works     ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
                                  : CURL_HTTP_VERSION_1_1;
  if (http_version_ == CURL_HTTP_VERSION_1_1) options_.http2 = false;
  options_.max_attempts = std::max(1u, options_.max_attempts);
  fallback_ca_ = fallback_ca_bundle(curl_version_info(CURLVERSION_NOW)->cainfo);
  build_headers();

  multi_.reset(curl_multi_init());
  if (!multi_) throw error("cppless aws: curl_multi_init failed");
  CURLM* multi = multi_.get();
  curl_multi_setopt(multi, CURLMOPT_PIPELINING, options_.http2 ? CURLPIPE_MULTIPLEX : CURLPIPE_NOTHING);
  curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(options_.connections));
  curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(options_.connections));
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, static_cast<long>(options_.connections));
  curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, static_cast<long>(std::max(1u, options_.streams_per_connection)));
  io_ = std::thread([this] { run(); });
}

invoke_client::~invoke_client() {
  {
    std::lock_guard io(io_mutex_);
    stop_ = true;
  }
  curl_multi_wakeup(multi_.get());
  io_.join();
  // Calls still out belong to no instance any more (instances keep their backend alive).
  for (auto* c : inbox_) delete c;
  for (auto* c : outbox_) delete c;
  for (auto* c : waiting_) delete c;
  for (auto& [id, target] : targets_)
    for (auto* c : target->held) delete c;
  // The handles (idle easies, the multi, the header lists) free themselves.
}

std::string invoke_client::function_name(const std::string& entry_id, const config_values& config) const {
  static constexpr const char* arch_names[] = {"native", "x86_64", "arm64"};
  return aws::function_name(prefix_, entry_id,
                            config_key(config.memory_mb, config.timeout_s, config.ephemeral_storage_mb,
                                       arch_names[static_cast<int>(config.arch)]));
}

invoke_target& invoke_client::target_for(const invocation& call) {
  auto it = targets_.find(call.function_id);
  if (it != targets_.end()) return *it->second;
  const entry* e = registry::global().find(call.function_id);
  if (!e) throw unknown_function(std::string("cppless aws: no entry for ") + call.function_name + " in this executable");
  auto t = std::make_unique<invoke_target>();
  t->lambda_name = function_name(e->id, e->config);
  t->url = options_.settings.endpoint + "/2015-03-31/functions/" + t->lambda_name + "/invocations";
  if (!options_.qualifier.empty()) {
    char* escaped = curl_easy_escape(nullptr, options_.qualifier.c_str(), static_cast<int>(options_.qualifier.size()));
    t->url += std::string("?Qualifier=") + (escaped ? escaped : "");
    curl_free(escaped);
  }
  return *targets_.emplace(call.function_id, std::move(t)).first->second;
}

void invoke_client::submit(invocation&& call, completion done) {
  // Refuse before building anything: base64 grows the payload by a third.
  const std::size_t size = wire::request_size(call.payload.size());
  if (size > options_.max_request)
    throw payload_too_large("cppless aws: " + std::string(call.function_name) + ": request of " + std::to_string(size) +
                            " bytes (payload " + std::to_string(call.payload.size()) +
                            " bytes, base64 in JSON) exceeds Lambda's synchronous limit of " +
                            std::to_string(options_.max_request) + " bytes; nothing was sent");
  auto c = std::make_unique<pending_call>();
  c->target = &target_for(call);
  c->done = std::move(done);
  c->function_name = call.function_name;
  c->body = wire::encode_request(call.function_id, call.fingerprint, call.payload.span());
  // Lambda's own limit (timeout 0 deploys as the 900 s maximum) plus a margin for the network.
  const long function_s = call.config.timeout_s ? static_cast<long>(call.config.timeout_s) : 900;
  c->timeout_ms = (function_s + 30) * 1000;
  c->submitted = clock::now();
  ++calls_;
  bool was_empty;
  {
    std::lock_guard io(io_mutex_);
    was_empty = inbox_.empty();
    inbox_.push_back(c.release());
  }
  // One wake-up per batch: the I/O thread takes the whole inbox at once.
  if (was_empty) curl_multi_wakeup(multi_.get());
}

void invoke_client::progress(std::unique_lock<std::mutex>& lock, clock::time_point until) {
  std::unique_lock io(io_mutex_);
  if (outbox_.empty()) {
    lock.unlock();
    outbox_ready_.wait_until(io, until, [this] { return !outbox_.empty(); });
    io.unlock();
    lock.lock();  // backend mutex first, then io_mutex_: the order submit() uses
    io.lock();
  }
  std::deque<pending_call*> ready;
  ready.swap(outbox_);
  io.unlock();
  for (auto* c : ready) {
    std::unique_ptr<pending_call> owned(c);
    owned->done(std::move(owned->result));
  }
}

aws_totals invoke_client::totals() const {
  aws_totals t;
  t.calls = calls_.load();
  t.failed = failed_.load();
  t.cold = cold_.load();
  t.retries = retries_.load();
  t.billed = std::chrono::milliseconds(billed_ms_.load());
  t.credential_refreshes = credential_refreshes_.load();
  return t;
}

void invoke_client::build_headers() {
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  headers = curl_slist_append(headers, "X-Amz-Invocation-Type: RequestResponse");
  if (options_.log_tail) headers = curl_slist_append(headers, "X-Amz-Log-Type: Tail");
  if (!creds_.session_token.empty())
    headers = curl_slist_append(headers, ("X-Amz-Security-Token: " + creds_.session_token).c_str());
  // No empty "Expect:" to turn 100-continue off: libcurl before 8.3 signs that removed header
  // (curl issue #11664) and AWS refuses a signed header the request lacks. HTTP/2 has no
  // 100-continue, and HTTP/1.1 asks for it only for bodies over 1 MB.
  // Requests still out may use the previous list: it is kept until the client ends.
  if (headers_) retired_headers_.push_back(std::move(headers_));
  headers_.reset(headers);
}

void invoke_client::refresh_credentials_if_due() {
  // Temporary credentials (credential_process) are fetched again 5 minutes before they expire,
  // as the SDKs do; a failed attempt is retried after 30 s, and meanwhile calls go out with the
  // old ones (until AWS answers ExpiredTokenException, a typed error).
  const auto now = std::chrono::system_clock::now();
  if (creds_expire_ == std::chrono::system_clock::time_point::max() || now + std::chrono::minutes(5) < creds_expire_ ||
      now < next_refresh_attempt_)
    return;
  next_refresh_attempt_ = now + std::chrono::seconds(30);
  try {
    credentials fresh = settings::resolve().creds;
    if (fresh.access_key_id.empty()) return;
    creds_ = std::move(fresh);
    creds_expire_ = creds_.expires();
    build_headers();
    ++credential_refreshes_;
  } catch (const std::exception&) {
    // Keep the old credentials; the next attempt is in 30 s.
  }
}

easy_handle invoke_client::take_easy() {
  if (!idle_easies_.empty()) {
    easy_handle e = std::move(idle_easies_.back());
    idle_easies_.pop_back();
    return e;
  }
  // What every request shares is set once per handle: handles are reused for later calls
  // (creating and configuring one per call showed up in the client's profile).
  CURL* e = curl_easy_init();
  if (!e) return nullptr;
  const settings& s = options_.settings;
  curl_easy_setopt(e, CURLOPT_AWS_SIGV4, sigv4_.c_str());
  curl_easy_setopt(e, CURLOPT_HTTP_VERSION, http_version_);
  if (!s.ca_bundle.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, s.ca_bundle.c_str());
  else if (!fallback_ca_.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, fallback_ca_.c_str());
  curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
  return easy_handle(e);
}

void invoke_client::release_easy(pending_call* c) {
  if (!c->easy) return;
  // A handle keeps no state of the call that matters to the next one: every per-call option is
  // set again in start(); the cache of connections lives in the multi handle. The pool is
  // bounded: a handle holds its buffers (~20 KB), and a burst of 10,000 calls in flight must not
  // leave 10,000 of them behind.
  constexpr std::size_t max_idle = 256;
  if (idle_easies_.size() < max_idle) idle_easies_.push_back(std::move(c->easy));
  c->easy.reset();
}

void invoke_client::release_slot(invoke_target* target) {
  --target->in_flight;
  while (!target->held.empty() && target->in_flight < options_.max_in_flight_per_function) {
    pending_call* next = target->held.front();
    target->held.pop_front();
    start(next);
  }
}

void invoke_client::start(pending_call* c) {
  const unsigned cap = options_.max_in_flight_per_function;
  if (cap && c->target->in_flight >= cap) {
    c->target->held.push_back(c);  // admitted by release_slot when a call of this function ends
    return;
  }
  ++c->target->in_flight;
  c->holds_slot = true;
  if (!c->easy) {
    c->easy = take_easy();
    CURL* e = c->easy.get();
    if (!e) {
      c->result.error = std::make_exception_ptr(aws_error("cppless aws: curl_easy_init failed", 0, "ClientError"));
      --c->target->in_flight;
      c->holds_slot = false;
      complete(c);
      return;
    }
    // The credentials and the header list may have been refreshed since the handle was made.
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers_.get());
    curl_easy_setopt(e, CURLOPT_USERNAME, creds_.access_key_id.c_str());
    curl_easy_setopt(e, CURLOPT_PASSWORD, creds_.secret_access_key.c_str());
    curl_easy_setopt(e, CURLOPT_URL, c->target->url.c_str());
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, c->body.data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(c->body.size()));
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, c->timeout_ms);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(e, CURLOPT_PRIVATE, c);
  }
  c->response.clear();
  c->request_id.clear();
  c->function_error.clear();
  c->error_type.clear();
  c->log_result.clear();
  ++c->attempt;
  active_.insert(c);
  if (curl_multi_add_handle(multi_.get(), c->easy.get()) != CURLM_OK) {
    active_.erase(c);
    c->result.error = std::make_exception_ptr(aws_error("cppless aws: curl_multi_add_handle failed", 0, "ClientError"));
    --c->target->in_flight;
    c->holds_slot = false;
    complete(c);
  }
}

void invoke_client::retry_later(pending_call* c, bool throttled) {
  ++retries_;
  // Full jitter (AWS architecture blog "Exponential Backoff And Jitter"; the SDKs' standard
  // retry mode): uniform in [0, min(cap, base * 2^attempt)], so throttled callers spread out
  // instead of retrying in step. A throttled call never waits past its retry deadline.
  thread_local std::minstd_rand rng{std::random_device{}()};
  const auto cap = throttled ? options_.throttle_backoff_cap : options_.backoff_cap;
  const auto ceiling =
      std::min<long long>(cap.count(), options_.backoff_base.count() << std::min(c->attempt - 1, 20u));
  std::uniform_int_distribution<long long> pick(0, std::max(1LL, ceiling));
  c->due = clock::now() + std::chrono::milliseconds(pick(rng));
  if (throttled) c->due = std::min(c->due, c->submitted + options_.retry_deadline);
  waiting_.push_back(c);
}

void invoke_client::complete(pending_call* c) {
  if (c->result.error) ++failed_;
  bool was_empty;
  {
    std::lock_guard io(io_mutex_);
    was_empty = outbox_.empty();
    outbox_.push_back(c);
  }
  // progress() takes the whole outbox at once: only the first call of a batch must wake it.
  if (was_empty) outbox_ready_.notify_all();
}

void invoke_client::finished(pending_call* c, int curl_code) {
  const auto code = static_cast<CURLcode>(curl_code);
  curl_multi_remove_handle(multi_.get(), c->easy.get());
  active_.erase(c);
  if (c->holds_slot) {
    c->holds_slot = false;
    release_slot(c->target);
  }
  long status = 0;
  if (code == CURLE_OK) curl_easy_getinfo(c->easy.get(), CURLINFO_RESPONSE_CODE, &status);
  release_easy(c);
  const bool attempts_left = c->attempt < options_.max_attempts;
  const std::string where = " [" + c->function_name + " as Lambda function " + c->target->lambda_name + "]";
  outcome& out = c->result;
  out.stats.invocation_id = c->request_id;
  out.stats.round_trip = clock::now() - c->submitted;

  if (code != CURLE_OK) {
    if (is_connection_error(code) && attempts_left) return retry_later(c, false);
    if (code == CURLE_OPERATION_TIMEDOUT)
      out.error = std::make_exception_ptr(timeout_error("cppless aws: no answer from Lambda within " +
                                                        std::to_string(c->timeout_ms / 1000) + " s" + where));
    else
      out.error = std::make_exception_ptr(aws_error("cppless aws: " + std::string(curl_easy_strerror(code)) + " after " +
                                                        std::to_string(c->attempt) + " attempt(s)" + where,
                                                    0, "ConnectionError"));
    return complete(c);
  }

  if (status == 200 || status == 202) {
    std::uint64_t billed = 0;
    bool saw_init = false;
    if (!c->log_result.empty()) read_log_tail(c->log_result, out.stats, billed, saw_init);
    billed_ms_ += billed;
    out.stats.billed = std::chrono::milliseconds(billed);
    if (!c->function_error.empty()) {
      out.stats.cold = saw_init;
      out.error = wire::error_from_function_error(c->response, c->function_name + " as Lambda function " + c->target->lambda_name);
    } else {
      try {
        wire::response r = wire::decode_response(c->response);
        out.result = std::move(r.result);
        out.stats.cold = r.cold || saw_init;
        out.stats.execution = std::chrono::nanoseconds(r.exec_ns);
      } catch (const std::exception& e) {
        out.error = std::make_exception_ptr(protocol_error(std::string(e.what()) + where));
      }
    }
    if (out.stats.cold) ++cold_;
    return complete(c);
  }
  // 502 is not retried: Lambda's 502s are permanent (bad response from the function, invalid
  // runtime response), and a retry would run the function again.
  const bool throttled = status == 429;
  const bool retryable = throttled || status == 500 || status == 503 || status == 504;
  if (throttled && clock::now() < c->submitted + options_.retry_deadline) return retry_later(c, true);
  if (retryable && !throttled && attempts_left) return retry_later(c, false);
  auto [type, message] = service_error(*c);
  if (status == 404)
    out.error = std::make_exception_ptr(unknown_function(
        "cppless aws: Lambda function " + c->target->lambda_name + " does not exist (" + message +
        "); deploy this build with `cppless deploy <executable>` [" + c->function_name + "]"));
  else
    out.error = std::make_exception_ptr(
        aws_error("cppless aws: HTTP " + std::to_string(status) + " " + type + ": " + message +
                      (throttled ? " (still throttled after " + std::to_string(c->attempt) + " attempts over " +
                                       std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                          clock::now() - c->submitted).count()) +
                                       " ms: the retry deadline)"
                       : retryable ? " (gave up after " + std::to_string(c->attempt) + " attempts)"
                                   : "") +
                      where,
                  static_cast<int>(status), type));
  complete(c);
}

void invoke_client::run() {
  CURLM* multi = multi_.get();
  std::vector<pending_call*> fresh;
  for (;;) {
    {
      std::lock_guard io(io_mutex_);
      if (stop_) break;
      fresh.swap(inbox_);
    }
    if (!fresh.empty() || !waiting_.empty()) refresh_credentials_if_due();
    for (auto* c : fresh) start(c);
    fresh.clear();
    const auto now = clock::now();
    auto next_due = now + std::chrono::milliseconds(500);
    for (std::size_t i = 0; i < waiting_.size();) {
      if (waiting_[i]->due <= now) {
        pending_call* c = waiting_[i];
        waiting_[i] = waiting_.back();
        waiting_.pop_back();
        start(c);
      } else {
        next_due = std::min(next_due, waiting_[i]->due);
        ++i;
      }
    }
    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      pending_call* c = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &c);
      finished(c, msg->data.result);
    }
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(next_due - clock::now()).count();
    curl_multi_poll(multi, nullptr, 0, static_cast<int>(std::clamp<long long>(wait, 0, 500)), nullptr);
  }
  // Transfers still running are abandoned (no instance is left to receive them).
  for (auto* c : active_) {
    curl_multi_remove_handle(multi, c->easy.get());
    delete c;
  }
  active_.clear();
}

}  // namespace cppless::aws
