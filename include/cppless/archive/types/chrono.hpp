// cppless/archive/types/chrono.hpp — codecs for std::chrono::duration (its count) and time_point (its time since epoch).
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <chrono>
#include <cstddef>

#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

template <class R, class P>
struct codec<std::chrono::duration<R, P>> {
  static constexpr bool saveable = codec<R>::saveable, loadable = codec<R>::loadable;
  static constexpr std::size_t min_size = codec<R>::min_size;
  static void save(output_archive& ar, const std::chrono::duration<R, P>& d) { save_value(ar, d.count()); }
  static void load(input_archive& ar, std::chrono::duration<R, P>& d) {
    R count{};
    load_value(ar, count);
    d = std::chrono::duration<R, P>(count);
  }
};

template <class C, class D>
struct codec<std::chrono::time_point<C, D>> {
  static constexpr bool saveable = codec<D>::saveable, loadable = codec<D>::loadable;
  static constexpr std::size_t min_size = codec<D>::min_size;
  static void save(output_archive& ar, const std::chrono::time_point<C, D>& t) { save_value(ar, t.time_since_epoch()); }
  static void load(input_archive& ar, std::chrono::time_point<C, D>& t) {
    D d{};
    load_value(ar, d);
    t = std::chrono::time_point<C, D>(d);
  }
};

}  // namespace cppless::detail
