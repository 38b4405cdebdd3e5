// cppless/shared/byte_array.hpp — a fixed-size shared array of bytes with atomic operations on
// each index (Crucial's AtomicByteArray): get, set, add (wrapping modulo 256), compare-exchange,
// and a snapshot of the whole array. Every call is one linearizable operation; changes after a
// lost reply are applied once. An index outside [0, size) is an index_out_of_range.
#pragma once

#include <cppless/shared/client.hpp>

#include <cstdint>
#include <vector>

namespace cppless::shared {

class store;

class byte_array : public detail::handle {
 public:
  byte_array() = default;

  [[nodiscard]] std::uint8_t get(std::int64_t index) const;
  // Returns the previous value.
  std::uint8_t set(std::int64_t index, std::uint8_t value) const;
  // Adds delta (wrapping modulo 256) and returns the new value.
  std::uint8_t add(std::int64_t index, int delta) const;
  // Replaces the byte with `desired` if it equals `expected`; otherwise stores it in `expected`.
  bool compare_exchange(std::int64_t index, std::uint8_t& expected, std::uint8_t desired) const;
  // Every byte, read at one instant.
  [[nodiscard]] std::vector<std::uint8_t> snapshot() const;
  [[nodiscard]] std::int64_t size() const noexcept { return size_; }

  static const detail::kind_info& kind();

  template <class Archive>
  void serialize(Archive& ar) {
    ar(ref_, size_);
  }

 private:
  friend class store;
  byte_array(detail::object_ref ref, std::int64_t size) : handle(std::move(ref)), size_(size) {}
  std::int64_t size_ = 0;
};

}  // namespace cppless::shared
