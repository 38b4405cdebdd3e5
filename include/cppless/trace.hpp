// cppless/trace.hpp — invocation traces: one JSON line per finished call, on every backend.
//
//   CPPLESS_TRACE=run.jsonl ./my_program          # or: cppless::trace::start("run.jsonl");
//   cppless report run.jsonl --html run.html       # per function: calls, p50/p99, cold share, cost
//
// Each line (format version 1) says which function ran (name, id, config), where (backend,
// invocation id, worker), whether it was cold, its times (submitted, queued, started, executed,
// round trip), its payload bytes each way and, where the backend has them, the billed duration.
// Worker processes that dispatch nested calls append their lines to the same file (one write
// per batch of whole lines, O_APPEND). The first line each process writes describes the process.
//
// Cost: off, one relaxed atomic load per call. On, a clock read and a record handed to a
// background thread that formats and writes the lines (bench_trace measures it).
#pragma once

#include <atomic>
#include <chrono>
#include <string>

namespace cppless {

struct invocation;
struct outcome;
class backend;

namespace trace {

inline constexpr int format_version = 1;

// Starts tracing to `path` (truncated; the host's first call writes it). Throws cppless::error
// if the file cannot be opened. Replaces an earlier start().
void start(const std::string& path);
// Writes what is pending and stops tracing.
void stop();
// Writes what is pending (also done every 100 ms and at exit).
void flush();
[[nodiscard]] bool enabled() noexcept;

// For backends that lease resources (the rFaaS design): one "lease" line when a lease ends, with
// its memory, how long it was allocated and how long its executors hot-polled, so that
// `cppless report` bills it by rFaaS' formula. Does nothing while tracing is off.
void record_lease(const std::string& lease, unsigned memory_mb, std::chrono::nanoseconds allocated,
                  std::chrono::nanoseconds hot_poll);

namespace detail {
struct call_record;
extern std::atomic<bool> active;
// Called by the instance for every call while tracing: at submit, and when the call ended.
[[nodiscard]] call_record* begin(const invocation& call, const backend& where);
void end(call_record* record, const outcome& done) noexcept;
// A call that was never submitted (submit threw): its record is dropped.
void discard(call_record* record) noexcept;
}  // namespace detail

}  // namespace trace
}  // namespace cppless
