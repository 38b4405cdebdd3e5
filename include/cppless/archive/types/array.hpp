// cppless/archive/types/array.hpp — codecs for T[N] and std::array: the elements, no length.
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstring>
#include <iterator>

#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

template <class A, class T, std::size_t N>
struct array_codec {
  using E = codec<T>;
  static constexpr bool saveable = E::saveable, loadable = E::loadable;
  static constexpr std::size_t min_size = sat_mul(N, E::min_size);
  static void save(output_archive& ar, const A& a) {
    if constexpr (N == 0) return;
    else if constexpr (is_block_v<T>) std::memcpy(ar.grow(N * sizeof(T)), std::data(a), N * sizeof(T));
    else for (const T& x : a) save_value(ar, x);
  }
  static void load(input_archive& ar, A& a) {
    if constexpr (N == 0) return;
    else if constexpr (is_block_v<T>) std::memcpy(std::data(a), ar.take(N * sizeof(T), "array"), N * sizeof(T));
    else for (T& x : a) load_value(ar, x);
  }
};

template <class T, std::size_t N>
struct codec<T[N]> : array_codec<T[N], T, N> {};
// A const array (which would match both codec<const T> and codec<T[N]>): saved, never loaded.
template <class T, std::size_t N>
struct codec<const T[N]> {
  static constexpr bool saveable = codec<T[N]>::saveable, loadable = false;
  static constexpr std::size_t min_size = codec<T[N]>::min_size;
  static void save(output_archive& ar, const T (&a)[N]) { codec<T[N]>::save(ar, a); }
};
template <class T, std::size_t N>
struct codec<std::array<T, N>> : array_codec<std::array<T, N>, T, N> {};

}  // namespace cppless::detail
