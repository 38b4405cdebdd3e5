// What an executor manager and the executors it starts share, besides the executable: the
// environment variable that starts worker mode, and a page of counters the executor keeps
// (the manager reads them for billing, even after the executor died).
#pragma once

#include <atomic>
#include <cstdint>

namespace cppless::lease {

// "socket_fd:stats_fd:cores_fd:core_index:hot_poll_us:mode" (mode: hot | warm).
inline constexpr const char* executor_variable = "CPPLESS_LEASE_EXECUTOR";

struct executor_counters {
  std::atomic<std::uint64_t> compute_ns{0};   // inside functions
  std::atomic<std::uint64_t> hot_poll_ns{0};  // busy-polling the socket for the next call
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> rejected{0};     // warm calls refused because the core was busy
};

// One flag per core of the manager: a warm executor runs a call only while it holds its core's
// flag, and refuses the call at once when another executor on that core holds it.
inline constexpr unsigned max_cores = 1024;
struct core_table {
  std::atomic<std::uint32_t> busy[max_cores];
};

// A result frame with this flag bit is a refusal: the call did not run; send it elsewhere.
inline constexpr std::uint32_t flag_rejected = 1u << 8;

}  // namespace cppless::lease
