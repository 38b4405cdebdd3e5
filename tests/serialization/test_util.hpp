// Helpers shared by the serialization tests.
#pragma once

#include <cppless/archive.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace cppless_test {

template <class T>
T round_trip(const T& value) {
  const cppless::byte_buffer bytes = cppless::to_bytes(value);
  return cppless::from_bytes<T>(bytes.span());
}

inline std::vector<std::byte> bytes_of(const cppless::byte_buffer& b) { return {b.begin(), b.end()}; }

// Little-endian encoding of an unsigned integer, for hand-made payloads.
template <class U>
void put(std::vector<std::byte>& out, U value) {
  std::byte raw[sizeof(U)];
  std::memcpy(raw, &value, sizeof(U));
  out.insert(out.end(), raw, raw + sizeof(U));
}

// Counts allocations made through it, so tests can assert that a hostile length did not
// make the decoder allocate.
struct allocation_log {
  static inline std::size_t largest = 0;
  static inline std::size_t total = 0;
  static void reset() { largest = total = 0; }
};

template <class T>
struct counting_allocator {
  using value_type = T;
  counting_allocator() = default;
  template <class U>
  counting_allocator(const counting_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    allocation_log::largest = std::max(allocation_log::largest, n * sizeof(T));
    allocation_log::total += n * sizeof(T);
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
  template <class U>
  bool operator==(const counting_allocator<U>&) const noexcept { return true; }
};

}  // namespace cppless_test
