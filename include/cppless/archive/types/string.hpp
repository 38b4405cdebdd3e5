// cppless/archive/types/string.hpp — codecs for std::basic_string: a length, then the characters.
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <cstddef>
#include <string>

#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

template <class C, class Tr, class A>
struct codec<std::basic_string<C, Tr, A>> {
  static constexpr bool saveable = is_bitwise_v<C>, loadable = is_bitwise_v<C>;
  static constexpr std::size_t min_size = 8;
  static constexpr const char* what = std::is_same_v<C, char> ? "std::string" : "std::basic_string";
  static void save(output_archive& ar, const std::basic_string<C, Tr, A>& s) { save_block(ar, s.data(), s.size()); }
  static void load(input_archive& ar, std::basic_string<C, Tr, A>& s) {
    const std::size_t n = ar.read_length(what, sizeof(C), sizeof(C));
    const std::byte* p = ar.take(n * sizeof(C), what);
    if (n == 0) {
      s.clear();
    } else if constexpr (sizeof(C) == 1) {
      s.assign(reinterpret_cast<const C*>(p), n);  // a one-byte character type may alias any byte
    } else {
      s.resize(n);
      std::memcpy(s.data(), p, n * sizeof(C));
    }
  }
};

}  // namespace cppless::detail
