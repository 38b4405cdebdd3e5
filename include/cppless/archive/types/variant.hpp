// cppless/archive/types/variant.hpp — codecs for std::variant (u32 index, then the alternative) and std::monostate (nothing).
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <variant>

#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

template <>
struct codec<std::monostate> {
  static constexpr bool saveable = true, loadable = true;
  static constexpr std::size_t min_size = 0;
  static void save(output_archive&, const std::monostate&) {}
  static void load(input_archive&, std::monostate&) {}
};

template <class... T>
struct codec<std::variant<T...>> {
  using V = std::variant<T...>;
  static constexpr bool saveable = (codec<T>::saveable && ...);
  static constexpr bool loadable = ((codec<T>::loadable && std::is_default_constructible_v<T>) && ...);
  static constexpr std::size_t min_size = sat_add(4, std::min({codec<T>::min_size...}));
  static void save(output_archive& ar, const V& v) {
    if (v.valueless_by_exception()) throw error("cppless: cannot serialize a std::variant that is valueless_by_exception");
    const auto index = static_cast<std::uint32_t>(v.index());
    std::memcpy(ar.grow(4), &index, 4);
    std::visit([&ar](const auto& x) { save_value(ar, x); }, v);
  }
  static void load(input_archive& ar, V& v) {
    std::uint32_t index;
    std::memcpy(&index, ar.take(4, "std::variant index"), 4);
    if (index >= sizeof...(T)) [[unlikely]]
      throw_corrupt("std::variant", "index " + std::to_string(index) + " is out of range (" +
                                        std::to_string(sizeof...(T)) + " alternatives)", ar.position() - 4);
    load_alternative(ar, v, index, std::index_sequence_for<T...>{});
  }
  template <std::size_t... I>
  static void load_alternative(input_archive& ar, V& v, std::size_t index, std::index_sequence<I...>) {
    (void)((index == I ? (load_value(ar, v.template emplace<I>()), true) : false) || ...);
  }
};

}  // namespace cppless::detail
