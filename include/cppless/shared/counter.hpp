// cppless/shared/counter.hpp — a shared 64-bit counter (Crucial's AtomicLong).
//
// Every call is one linearizable operation in Redis; add() returns the value it produced, so
// concurrent adders each see a distinct intermediate total. Overflow beyond int64 is refused
// (server_error), nothing wraps.
#pragma once

#include <cppless/shared/client.hpp>

#include <cstdint>

namespace cppless::shared {

class store;

class counter : public detail::handle {
 public:
  counter() = default;  // unbound; real handles come from store::counter (or a deserialized copy)

  // Adds delta and returns the new value.
  std::int64_t add(std::int64_t delta = 1) const;
  std::int64_t get() const;
  // Sets the value and returns the previous one.
  std::int64_t reset(std::int64_t value = 0) const;

  static const detail::kind_info& kind();

 private:
  friend class store;
  explicit counter(detail::object_ref ref) : handle(std::move(ref)) {}
};

}  // namespace cppless::shared
