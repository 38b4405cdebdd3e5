// cppless/archive/types/tuple.hpp — codecs for std::pair and std::tuple: the elements in order.
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <cstddef>
#include <tuple>
#include <utility>

#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

template <class A, class B>
struct codec<std::pair<A, B>> {
  static constexpr bool saveable = codec<A>::saveable && codec<B>::saveable;
  static constexpr bool loadable = codec<A>::loadable && codec<B>::loadable;
  static constexpr std::size_t min_size = sat_add(codec<A>::min_size, codec<B>::min_size);
  static void save(output_archive& ar, const std::pair<A, B>& p) {
    save_value(ar, p.first);
    save_value(ar, p.second);
  }
  static void load(input_archive& ar, std::pair<A, B>& p) {
    load_value(ar, p.first);
    load_value(ar, p.second);
  }
};

template <class... T>
struct codec<std::tuple<T...>> {
  static constexpr bool saveable = (codec<T>::saveable && ...);
  static constexpr bool loadable = (codec<T>::loadable && ...);
  static constexpr std::size_t min_size = [] {
    std::size_t total = 0;
    ((total = sat_add(total, codec<T>::min_size)), ...);
    return total;
  }();
  static void save(output_archive& ar, const std::tuple<T...>& t) {
    std::apply([&](const T&... x) { (save_value(ar, x), ...); }, t);
  }
  static void load(input_archive& ar, std::tuple<T...>& t) {
    std::apply([&](T&... x) { (load_value(ar, x), ...); }, t);
  }
};

}  // namespace cppless::detail
