// cppless/archive/types/complex.hpp — codecs for std::complex: real, then imaginary part.
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <complex>
#include <cstddef>

#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

template <class T>
struct codec<std::complex<T>> {
  static constexpr bool saveable = codec<T>::saveable, loadable = codec<T>::loadable;
  static constexpr std::size_t min_size = sat_mul(2, codec<T>::min_size);
  static void save(output_archive& ar, const std::complex<T>& c) {
    save_value(ar, c.real());
    save_value(ar, c.imag());
  }
  static void load(input_archive& ar, std::complex<T>& c) {
    T re{}, im{};
    load_value(ar, re);
    load_value(ar, im);
    c = std::complex<T>(re, im);
  }
};

}  // namespace cppless::detail
