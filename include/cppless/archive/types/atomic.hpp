// cppless/archive/types/atomic.hpp — codecs for std::atomic<T>: its value.
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <atomic>
#include <cstddef>

#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

template <class T>
struct codec<std::atomic<T>> {
  static constexpr bool saveable = codec<T>::saveable;
  static constexpr bool loadable = codec<T>::loadable && std::is_default_constructible_v<T>;
  static constexpr std::size_t min_size = codec<T>::min_size;
  static void save(output_archive& ar, const std::atomic<T>& a) { save_value(ar, a.load()); }
  static void load(input_archive& ar, std::atomic<T>& a) {
    T v{};
    load_value(ar, v);
    a.store(v);
  }
};

}  // namespace cppless::detail
