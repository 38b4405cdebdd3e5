// cppless/aws.hpp — the AWS Lambda backend: every offloaded function is a Lambda function.
//
//   auto dispatcher = cppless::aws_dispatcher::from_env();   // region + credentials, the AWS way
//   auto instance = dispatcher.create_instance();
//   cppless::dispatch<cppless::config<cppless::with_memory<2048>>>(instance, fn, result);
//   cppless::wait(instance, n);
//
// Calls are synchronous Lambda invocations (POST /2015-03-31/functions/{name}/invocations),
// SigV4-signed, multiplexed as HTTP/2 streams over a small pool of connections driven by one
// I/O thread, so dispatch never blocks on the network. The function names come from the
// executable's name and a hash of each entry's id and config (see aws/naming.hpp); `cppless
// deploy <exe>` (or the CMake function aws_lambda_serverless_target) creates them. Inside Lambda
// the same executable serves the calls (the Runtime API loop in src/aws/runtime.cpp).
//
// Configuration comes from the environment like the AWS CLI's: AWS_ACCESS_KEY_ID /
// AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, then the shared credentials and config files for
// AWS_PROFILE; AWS_REGION / AWS_DEFAULT_REGION / the profile's region; AWS_ENDPOINT_URL_LAMBDA /
// AWS_ENDPOINT_URL to talk to something else than the real service (tests, local servers).
#pragma once

#include <cppless/aws/settings.hpp>
#include <cppless/error.hpp>
#include <cppless/instance.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace cppless {

// A call the Lambda service refused or could not carry out (after retries where they apply):
// throttling, service errors, a lost connection, bad credentials. status() is the HTTP status
// (0 when no response came), aws_type() the service's error type (e.g. "TooManyRequestsException").
class aws_error : public call_error {
 public:
  aws_error(const std::string& what, int status, std::string aws_type, std::int64_t call_id = -1)
      : call_error(what, call_id), status_(status), type_(std::move(aws_type)) {}
  int status() const noexcept { return status_; }
  const std::string& aws_type() const noexcept { return type_; }

 private:
  int status_;
  std::string type_;
};

struct aws_options {
  aws::settings settings;                   // filled by from_env(); may be set by hand
  std::string function_prefix;              // empty: this executable's name (what deploy used)
  unsigned connections = 16;                // HTTP/2 connections to the endpoint
  unsigned streams_per_connection = 100;    // concurrent calls multiplexed on one connection
  bool http2 = true;                        // false: HTTP/1.1, one call per connection at a time
  unsigned max_attempts = 8;                // per call, for 500/503/504 and lost connections
  std::chrono::milliseconds backoff_base{25};   // first retry waits up to this (full jitter)
  std::chrono::milliseconds backoff_cap{2000};  // no wait for a 5xx retry is longer
  // Throttling (429) is retried, with full-jitter backoff up to throttle_backoff_cap, for as long
  // as the call is younger than retry_deadline (then aws_error 429). 502, other 4xx and function
  // errors are never retried: they would run the function again or fail again.
  std::chrono::milliseconds retry_deadline{std::chrono::minutes(5)};
  std::chrono::milliseconds throttle_backoff_cap{5000};
  // Calls of one Lambda function in flight at once; the rest wait in the client. 0: no cap.
  // Default: Lambda's default account concurrency. Set it to a function's reserved concurrency
  // to avoid 429s altogether.
  unsigned max_in_flight_per_function = 1000;
  std::size_t max_request = std::size_t{6} << 20;  // Lambda's synchronous payload limit (bytes)
  bool log_tail = true;                     // ask for the log tail: billed duration per call
  std::string qualifier;                    // a version or alias to invoke (`cppless deploy --publish ALIAS`); empty: $LATEST
};

// Totals over all calls of one dispatcher (cost and health at a glance).
struct aws_totals {
  std::uint64_t calls = 0, failed = 0, cold = 0, retries = 0;
  std::chrono::milliseconds billed{0};   // sum of Lambda's billed durations (from the log tail)
  std::uint64_t credential_refreshes = 0;  // temporary credentials fetched again before expiry
};

class aws_dispatcher {
 public:
  // Region, credentials and endpoint the way the AWS CLI finds them; throws cppless::error
  // naming what is missing. `options.settings` is overwritten.
  static aws_dispatcher from_env(aws_options options = {});
  explicit aws_dispatcher(aws_options options);

  instance create_instance() const;

  const aws_options& options() const { return options_; }
  // Lambda function that serves entries with this id and config.
  std::string function_name(const std::string& entry_id, const config_values& config) const;
  aws_totals totals() const;

 private:
  aws_options options_;
  std::shared_ptr<backend> backend_;
};

}  // namespace cppless
