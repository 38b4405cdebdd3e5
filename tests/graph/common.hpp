// Shared by the graph tests: one warm local pool for the whole binary (workers are this binary).
#pragma once

#include <cppless/cppless.hpp>
#include <cppless/graph.hpp>

#include <chrono>
#include <cstdint>

namespace graph_test {

inline cppless::local_dispatcher& dispatcher() {
  static cppless::local_dispatcher d;
  return d;
}

// steady_clock is CLOCK_MONOTONIC: one clock for host and worker processes alike.
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace graph_test
