// cppless/shared/barrier.hpp — a cyclic barrier for a fixed number of parties (processes or
// functions), reusable generation after generation (Crucial's CyclicBarrier).
//
// arrive_and_wait() returns once `parties` calls of the same generation have arrived. A call that
// times out withdraws its arrival, so the barrier stays usable (unlike Java's, it does not break):
// the others keep waiting for a full set.
#pragma once

#include <cppless/shared/client.hpp>

#include <cstdint>

namespace cppless::shared {

class store;

class barrier : public detail::handle {
 public:
  barrier() = default;

  // Blocks until all parties of this generation have arrived; returns the generation number
  // (0, 1, 2, ...). Throws shared::wait_timeout after `timeout` (the arrival is withdrawn).
  std::int64_t arrive_and_wait(milliseconds timeout = default_wait) const;
  [[nodiscard]] int parties() const noexcept { return parties_; }

  static const detail::kind_info& kind();

  template <class Archive>
  void serialize(Archive& ar) {
    ar(ref_, parties_);
  }

 private:
  friend class store;
  barrier(detail::object_ref ref, int parties) : handle(std::move(ref)), parties_(parties) {}
  int parties_ = 0;
};

}  // namespace cppless::shared
