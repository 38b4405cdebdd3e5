// cppless/archive.hpp — binary serialization of call arguments, captures and results.
//
//   cppless::byte_buffer buf = cppless::to_bytes(x, y);          // or: output_archive ar(buf); ar(x, y);
//   auto v = cppless::from_bytes<std::vector<int>>(buf.span());  // or: input_archive ar(span); ar(v);
//
// Types follow cereal's conventions (see archive/user_types.hpp), so a type that works with
// cereal works here unchanged; the standard library is supported directly (archive/std_types.hpp):
// arithmetic types, bool, enums, std::basic_string, vector (incl. vector<bool>), array, T[N],
// pair, tuple, map, multimap, set, multiset, the unordered ones, list, forward_list, deque,
// valarray, stack, queue, priority_queue, optional, variant, monostate, unique_ptr and shared_ptr
// (shared_ptr identity kept within one payload, cycles refused; a derived class registered with
// CPPLESS_REGISTER_TYPE travels behind a pointer to its base), chrono::duration and time_point,
// complex, bitset, atomic.
// is_serializable_v<T> says, without ever failing to compile, whether T is one of those.
//
// Compared with cereal's BinaryArchive: one contiguous buffer instead of a std::ostream, lengths
// checked against the input before anything is allocated, shared_ptr tracking only (no raw
// pointers, no weak_ptr). The wire format is documented in archive/core.hpp.
#pragma once

#include <span>
#include <type_traits>

#include "cppless/archive/core.hpp"
#include "cppless/archive/std_types.hpp"
#include "cppless/archive/user_types.hpp"
#include "cppless/byte_buffer.hpp"

namespace cppless {

// Encodes the values, in order, into a new buffer.
template <class... T>
[[nodiscard]] byte_buffer to_bytes(const T&... values) {
  byte_buffer out;
  output_archive ar(out);
  ar(values...);
  return out;
}

// Decodes one T that must span the whole input (trailing bytes are a decode_error).
template <class T>
[[nodiscard]] T from_bytes(std::span<const std::byte> bytes) {
  static_assert(std::is_default_constructible_v<T>,
                "cppless::from_bytes<T> needs a default-constructible T; use from_bytes(bytes, value) to load in place");
  T value{};
  input_archive ar(bytes);
  ar(value);
  ar.expect_end();
  return value;
}

// Decodes into existing objects, in order; the input must be consumed exactly.
template <class... T>
void from_bytes(std::span<const std::byte> bytes, T&... values) {
  input_archive ar(bytes);
  ar(values...);
  ar.expect_end();
}

}  // namespace cppless
