// cppless/archive/types/arithmetic.hpp — codecs for arithmetic types, bool and enums (their own bytes), and const objects (saved, never loaded).
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

template <class T>
  requires(is_bitwise_v<T>)
struct codec<T> {
  static constexpr bool saveable = true, loadable = true;
  static constexpr std::size_t min_size = sizeof(T);
  static void save(output_archive& ar, const T& v) { std::memcpy(ar.grow(sizeof(T)), &v, sizeof(T)); }
  static void load(input_archive& ar, T& v) { std::memcpy(&v, ar.take(sizeof(T), type_label<T>()), sizeof(T)); }
};

// bool, and enums whose underlying type is bool: one byte that must be 0 or 1.
template <class T>
  requires(std::is_same_v<T, bool> || (std::is_enum_v<T> && !is_bitwise_v<T> && !std::is_const_v<T> && !std::is_volatile_v<T>))
struct codec<T> {
  static constexpr bool saveable = true, loadable = true;
  static constexpr std::size_t min_size = 1;
  static void save(output_archive& ar, const T& v) { *ar.grow(1) = static_cast<bool>(v) ? std::byte{1} : std::byte{0}; }
  static void load(input_archive& ar, T& v) {
    const auto b = static_cast<std::uint8_t>(*ar.take(1, "bool"));
    if (b > 1) [[unlikely]]
      throw_corrupt("bool", "byte is " + std::to_string(b) + " (must be 0 or 1)", ar.position() - 1);
    v = static_cast<T>(b != 0);
  }
};

// A const object (a pair<const K, V> inside a map, a const capture) can be saved, not loaded.
template <class T>
struct codec<const T> {
  static constexpr bool saveable = codec<T>::saveable, loadable = false;
  static constexpr std::size_t min_size = codec<T>::min_size;
  static void save(output_archive& ar, const T& v) { codec<T>::save(ar, v); }
};

}  // namespace cppless::detail
