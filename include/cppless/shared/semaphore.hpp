// cppless/shared/semaphore.hpp — a counting semaphore (Crucial's Semaphore).
//
// Not fair: a released permit goes to whichever caller takes it first, woken waiter or newcomer.
// Permits may be released by a caller that never acquired them (as with std::counting_semaphore).
#pragma once

#include <cppless/shared/client.hpp>

#include <cstdint>

namespace cppless::shared {

class store;

class semaphore : public detail::handle {
 public:
  semaphore() = default;

  // Takes n permits, blocking until they are available; throws shared::wait_timeout after `timeout`.
  void acquire(std::int64_t n = 1, milliseconds timeout = default_wait) const;
  [[nodiscard]] bool try_acquire(std::int64_t n = 1) const;
  // Returns n permits; returns the number available afterwards.
  std::int64_t release(std::int64_t n = 1) const;
  [[nodiscard]] std::int64_t available() const;

  static const detail::kind_info& kind();

 private:
  friend class store;
  explicit semaphore(detail::object_ref ref) : handle(std::move(ref)) {}
};

}  // namespace cppless::shared
