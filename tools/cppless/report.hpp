// `cppless report trace.jsonl [--plot out.png] [--html out.html] [--json out.json]`: what ran and
// what it would cost, from an invocation trace (include/cppless/trace.hpp). Per function: calls,
// failures, round trip and execution p50/p99, cold share, GB-seconds and the price on AWS Lambda
// (x86_64 and arm64 list prices, dated, overridable); lease billing by rFaaS' formula where the
// trace has leases; a timeline (a row per worker, a bar per call) in the HTML page and the plot.
// A line that cannot be read (truncated, another format version, a missing field) is named with
// its number and reason; the rest is reported.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cppless::tools {

struct traced_call {
  std::string function, function_id, backend, invocation, arch;
  long pid = 0, worker = 0;
  unsigned memory_mb = 0;
  bool cold = false, ok = true;
  std::int64_t submitted_ns = 0, started_ns = 0, executed_ns = 0;  // unix times
  std::int64_t queued_ns = 0, execution_ns = 0, round_trip_ns = 0;
  std::int64_t request_bytes = 0, response_bytes = 0;
  std::optional<std::int64_t> billed_ns;
};

// A lease (rFaaS design): allocated memory for a time, and the time its executors hot-polled.
struct traced_lease {
  std::string lease;
  unsigned memory_mb = 0;
  std::int64_t allocated_ns = 0, hot_poll_ns = 0;
};

struct trace_contents {
  std::vector<traced_call> calls;
  std::vector<traced_lease> leases;
  std::vector<std::string> problems;  // "line 7: ..." for every line that was skipped
  std::size_t lines = 0;
};

// Reads a trace; never throws for bad lines (they go to `problems`), only if the file cannot be opened.
trace_contents read_trace(const std::string& path);

// Prices (USD). Defaults: AWS Lambda list prices, us-east-1, first tier.
struct prices {
  static constexpr const char* as_of = "2024-11 (unchanged since arm64 launched on 2021-09-29)";
  double lambda_x86_gb_s = 0.0000166667;
  double lambda_arm_gb_s = 0.0000133334;
  double lambda_request = 0.20 / 1e6;
  // rFaaS' C = Ca * ta + Cc * tc + Ch * th (ta in GB-s; tc, th in s). rFaaS publishes no prices:
  // the defaults take Lambda's provisioned-concurrency prices (allocation 0.0000041667 per GB-s,
  // duration 0.0000097222 per GB-s, applied per second of a 1 GB executor), overridable.
  double lease_allocation_gb_s = 0.0000041667;
  double lease_compute_s = 0.0000097222;
  double lease_hot_poll_s = 0.0000097222;
};

struct function_summary {
  std::string function, function_id, backend;
  unsigned memory_mb = 0;
  std::size_t calls = 0, failed = 0, cold = 0;
  double round_trip_p50_ms = 0, round_trip_p99_ms = 0, execution_p50_ms = 0, execution_p99_ms = 0;
  double gb_seconds = 0;  // billed duration (or execution rounded up to 1 ms) x memory
  double lambda_x86_usd = 0, lambda_arm_usd = 0;
};

struct lease_summary {
  double allocation_gb_s = 0, compute_s = 0, hot_poll_s = 0, usd = 0;
  std::size_t leases = 0;
};

struct report {
  std::vector<function_summary> functions;
  std::optional<lease_summary> lease;
  double total_lambda_x86_usd = 0, total_lambda_arm_usd = 0, total_gb_seconds = 0;
};

report summarize(const trace_contents& trace, const prices& p);
std::string render_text(const report& r, const trace_contents& trace, const prices& p);
std::string render_html(const report& r, const trace_contents& trace, const prices& p);
std::string render_json(const report& r, const trace_contents& trace, const prices& p);

void add_report_command(CLI::App& app);

}  // namespace cppless::tools
