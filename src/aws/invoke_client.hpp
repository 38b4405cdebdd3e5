// The Lambda invoke client: the backend behind aws_dispatcher.
//
// One I/O thread owns a libcurl multi handle: calls submitted by user threads are handed over
// through an inbox and a wake-up, become HTTP/2 streams multiplexed over a bounded pool of
// connections, and come back through an outbox that progress() drains under the backend lock
// (where completions must run). Throttling (429), service errors (5xx) and lost connections
// are retried by the I/O thread after a full-jitter exponential backoff; a broken connection
// is dropped by libcurl, so the retry goes out on a live or a fresh one.
#pragma once

#include "curl_handles.hpp"

#include <cppless/aws.hpp>
#include <cppless/instance.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace cppless::aws {

struct pending_call;

// Where calls of one entry go (made once per entry, kept for the client's life).
struct invoke_target {
  std::string lambda_name;
  std::string url;
  // I/O thread only: calls out now, and calls waiting for a slot (max_in_flight_per_function).
  unsigned in_flight = 0;
  std::deque<pending_call*> held;
};

class invoke_client final : public backend {
 public:
  explicit invoke_client(const aws_options& options);
  ~invoke_client() override;

  void submit(invocation&& call, completion done) override;
  void progress(std::unique_lock<std::mutex>& lock, clock::time_point until) override;
  std::string name() const override { return "aws"; }

  aws_totals totals() const;
  std::string function_name(const std::string& entry_id, const config_values& config) const;

 private:
  void run();  // the I/O thread
  void start(pending_call* call);
  void finished(pending_call* call, int curl_code);
  void retry_later(pending_call* call, bool throttled);
  void complete(pending_call* call);
  easy_handle take_easy();                // a reused handle, or a new one (null on failure)
  void release_easy(pending_call* call);  // its handle goes back to the pool
  void build_headers();                   // headers_ from creds_ (the session token)
  void refresh_credentials_if_due();      // I/O thread
  invoke_target& target_for(const invocation& call);
  void release_slot(invoke_target* target);  // a call of target is no longer out: admit a held one

  aws_options options_;
  std::string prefix_;
  std::string sigv4_;       // "aws:amz:<region>:lambda"
  long http_version_ = 0;   // CURL_HTTP_VERSION_*
  std::string fallback_ca_; // the system's CA bundle where libcurl's compiled-in path is missing
  multi_handle multi_;
  header_list headers_;     // the headers every request carries
  std::unordered_map<std::uint64_t, std::unique_ptr<invoke_target>> targets_;  // by function id; submitters only

  std::mutex io_mutex_;  // inbox_, outbox_, stop_; taken after the backend mutex, never before
  std::condition_variable outbox_ready_;
  std::vector<pending_call*> inbox_;
  std::deque<pending_call*> outbox_;
  bool stop_ = false;

  // Owned by the I/O thread.
  std::vector<pending_call*> waiting_;  // retries not yet due
  std::unordered_set<pending_call*> active_;  // attached to the multi handle
  std::vector<easy_handle> idle_easies_;      // handles between calls
  credentials creds_;                         // refreshed before they expire (credential_process)
  std::chrono::system_clock::time_point creds_expire_ = std::chrono::system_clock::time_point::max();
  std::chrono::system_clock::time_point next_refresh_attempt_{};
  std::vector<header_list> retired_headers_;  // lists of earlier credentials (requests may still use them)

  std::atomic<std::uint64_t> calls_{0}, failed_{0}, cold_{0}, retries_{0}, billed_ms_{0}, credential_refreshes_{0};
  std::thread io_;
};

}  // namespace cppless::aws
