// cppless/archive/types/optional.hpp — codecs for std::optional: a u8 flag, then the value.
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <cstddef>
#include <optional>

#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

template <class T>
struct codec<std::optional<T>> {
  static constexpr bool saveable = codec<T>::saveable;
  static constexpr bool loadable = codec<T>::loadable && std::is_default_constructible_v<T>;
  static constexpr std::size_t min_size = 1;
  static void save(output_archive& ar, const std::optional<T>& o) {
    *ar.grow(1) = o ? std::byte{1} : std::byte{0};
    if (o) save_value(ar, *o);
  }
  static void load(input_archive& ar, std::optional<T>& o) {
    if (!read_flag(ar, "std::optional")) {
      o.reset();
    } else {
      o.emplace();
      load_value(ar, *o);
    }
  }
};

}  // namespace cppless::detail
