// cppless/archive/types/bitset.hpp — codecs for std::bitset<N>: ceil(N / 8) bytes, bit i in byte i/8.
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstring>

#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

template <std::size_t N>
struct codec<std::bitset<N>> {
  static constexpr bool saveable = true, loadable = true;
  static constexpr std::size_t min_size = (N + 7) / 8;
  static void save(output_archive& ar, const std::bitset<N>& b) {
    std::byte* p = ar.grow(min_size);
    std::memset(p, 0, min_size);
    for (std::size_t i = 0; i < N; ++i)
      if (b[i]) p[i / 8] |= std::byte{1} << (i % 8);
  }
  static void load(input_archive& ar, std::bitset<N>& b) {
    const std::byte* p = ar.take(min_size, "std::bitset");
    if constexpr (N % 8 != 0) {
      if ((static_cast<unsigned>(p[N / 8]) >> (N % 8)) != 0)
        throw_corrupt("std::bitset", "has bits set past its size", ar.position() - 1);
    }
    for (std::size_t i = 0; i < N; ++i) b[i] = ((static_cast<unsigned>(p[i / 8]) >> (i % 8)) & 1u) != 0;
  }
};

}  // namespace cppless::detail
