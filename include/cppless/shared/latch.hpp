// cppless/shared/latch.hpp — a single-use count-down latch (std::latch, Java's CountDownLatch).
//
// The count starts at the value given when the latch is created and only goes down; wait()
// returns once it is zero. Counting down below zero stops at zero.
#pragma once

#include <cppless/shared/client.hpp>

#include <cstdint>

namespace cppless::shared {

class store;

class latch : public detail::handle {
 public:
  latch() = default;

  // Decrements by n; returns the remaining count.
  std::int64_t count_down(std::int64_t n = 1) const;
  // Blocks until the count is zero; throws shared::wait_timeout after `timeout`.
  void wait(milliseconds timeout = default_wait) const;
  [[nodiscard]] bool try_wait() const;
  void arrive_and_wait(std::int64_t n = 1, milliseconds timeout = default_wait) const;
  [[nodiscard]] std::int64_t count() const;

  static const detail::kind_info& kind();

 private:
  friend class store;
  explicit latch(detail::object_ref ref) : handle(std::move(ref)) {}
};

}  // namespace cppless::shared
