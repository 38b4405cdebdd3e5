// cppless/archive/types/support.hpp — codecs for helpers shared by the codecs of the standard types (block copies, lengths, reservations).
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <type_traits>

#include "cppless/archive/user_types.hpp"

namespace cppless::detail {

// Types encoded as their own bytes: a contiguous run of them is one memcpy.
template <class T>
constexpr bool bitwise() {
  if constexpr (std::is_const_v<T> || std::is_volatile_v<T>) return false;
  else if constexpr (std::is_enum_v<T>) return !std::is_same_v<std::underlying_type_t<T>, bool>;
  else return std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
}
template <class T>
inline constexpr bool is_bitwise_v = bitwise<T>();

// Element types whose arrays are copied as one block: the bitwise ones and std::complex of them
// (whose layout the standard fixes as T[2]).
template <class T>
inline constexpr bool is_block_v = is_bitwise_v<T>;
template <class T>
inline constexpr bool is_block_v<std::complex<T>> = is_bitwise_v<T>;

constexpr std::size_t sat_add(std::size_t a, std::size_t b) {
  return a > std::numeric_limits<std::size_t>::max() - b ? std::numeric_limits<std::size_t>::max() : a + b;
}
constexpr std::size_t sat_mul(std::size_t a, std::size_t b) {
  return b != 0 && a > std::numeric_limits<std::size_t>::max() / b ? std::numeric_limits<std::size_t>::max() : a * b;
}

inline void write_length(output_archive& ar, std::size_t n) {
  const std::uint64_t len = n;
  std::memcpy(ar.grow(sizeof len), &len, sizeof len);
}

// Length prefix and the elements' bytes, in one capacity check.
template <class T>
void save_block(output_archive& ar, const T* data, std::size_t n) {
  const std::size_t bytes = n * sizeof(T);
  std::byte* p = ar.grow(sizeof(std::uint64_t) + bytes);
  const std::uint64_t len = n;
  std::memcpy(p, &len, sizeof len);
  if (bytes != 0) std::memcpy(p + sizeof len, data, bytes);
}

// Reads T values out of unaligned payload bytes. vector::assign(it, it) with it then allocates
// once and copies in one pass (the compiler turns the loop into vector moves): half the memory
// traffic of resize() (which zeroes) followed by memcpy.
template <class T>
struct unaligned_iterator {
  using iterator_category = std::random_access_iterator_tag;
  using value_type = T;
  using difference_type = std::ptrdiff_t;
  using pointer = const T*;
  using reference = T;

  const std::byte* p;

  T operator*() const noexcept {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
  T operator[](difference_type n) const noexcept { return *(*this + n); }
  unaligned_iterator& operator++() noexcept { return p += sizeof(T), *this; }
  unaligned_iterator& operator--() noexcept { return p -= sizeof(T), *this; }
  unaligned_iterator operator++(int) noexcept { auto c = *this; return ++*this, c; }
  unaligned_iterator operator--(int) noexcept { auto c = *this; return --*this, c; }
  unaligned_iterator& operator+=(difference_type n) noexcept { return p += n * static_cast<difference_type>(sizeof(T)), *this; }
  unaligned_iterator& operator-=(difference_type n) noexcept { return p -= n * static_cast<difference_type>(sizeof(T)), *this; }
  friend unaligned_iterator operator+(unaligned_iterator i, difference_type n) noexcept { return i += n; }
  friend unaligned_iterator operator+(difference_type n, unaligned_iterator i) noexcept { return i += n; }
  friend unaligned_iterator operator-(unaligned_iterator i, difference_type n) noexcept { return i -= n; }
  friend difference_type operator-(unaligned_iterator a, unaligned_iterator b) noexcept {
    return (a.p - b.p) / static_cast<difference_type>(sizeof(T));
  }
  friend auto operator<=>(unaligned_iterator a, unaligned_iterator b) noexcept = default;
};

inline bool read_flag(input_archive& ar, const char* what) {
  const auto b = static_cast<std::uint8_t>(*ar.take(1, what));
  if (b > 1) [[unlikely]]
    throw_corrupt(what, "flag is " + std::to_string(b) + " (must be 0 or 1)", ar.position() - 1);
  return b != 0;
}

// Saves n elements; after the first, reserves room for the rest assuming they are alike, which
// turns the buffer's geometric growth (and its copies) into one allocation for uniform data.
template <class It>
void save_elements(output_archive& ar, It first, It last, std::size_t n) {
  if (first == last) return;
  byte_buffer& buf = ar.buffer();
  const std::size_t before = buf.size();
  save_value(ar, *first);
  const std::size_t one = buf.size() - before;
  constexpr std::size_t max_guess = std::size_t{1} << 30;  // beyond this, let the buffer double
  if (n > 1 && one != 0 && one <= max_guess / (n - 1)) ar.reserve_hint(buf.size() + one * (n - 1));
  for (++first; first != last; ++first) save_value(ar, *first);
}

// How many elements to reserve for a decoded count n (already checked against the bytes left):
// all of them when their memory is within 16x their minimal encoding, else at most 16 MiB worth
// (beyond that the container grows as elements really arrive), so a small payload cannot make
// the decoder reserve gigabytes it will never fill. User types (min_size 0, unknown) of 100k
// elements of 160 bytes still get a single allocation.
inline constexpr std::size_t max_speculative_bytes = std::size_t{1} << 24;

template <class T>
std::size_t safe_reserve(std::size_t n, std::size_t min_size) {
  if (min_size != 0 && sizeof(T) <= 16 * min_size) return n;
  return std::min(n, std::max<std::size_t>(1, max_speculative_bytes / sizeof(T)));
}

// What one element of a node-based container costs beyond its value: links, hash, allocator
// rounding (an estimate; it only has to be of the right size).
inline constexpr std::size_t node_overhead = 4 * sizeof(void*);

// Loads one element of a container, charging the archive's budget when it took no bytes.
template <class T>
void load_element(input_archive& ar, T& x, const char* what, std::size_t overhead = 0) {
  if constexpr (codec<T>::min_size == 0) {
    const std::size_t before = ar.position();
    load_value(ar, x);
    if (ar.position() == before) ar.charge_empty_element(sizeof(T) + overhead, what);
  } else {
    load_value(ar, x);
  }
}

}  // namespace cppless::detail
