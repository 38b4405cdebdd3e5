// cppless/archive/types/vector.hpp — codecs for std::vector (one block for arithmetic elements), std::vector<bool> (packed bits), std::valarray.
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <cstddef>
#include <valarray>
#include <vector>

#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

template <class T, class A>
struct codec<std::vector<T, A>> {
  using E = codec<T>;
  static constexpr bool saveable = E::saveable;
  static constexpr bool loadable = E::loadable && std::is_default_constructible_v<T>;
  static constexpr std::size_t min_size = 8;
  static void save(output_archive& ar, const std::vector<T, A>& v) {
    if constexpr (is_block_v<T>) {
      save_block(ar, v.data(), v.size());
    } else {
      write_length(ar, v.size());
      save_elements(ar, v.begin(), v.end(), v.size());
    }
  }
  static void load(input_archive& ar, std::vector<T, A>& v) {
    if constexpr (is_block_v<T>) {
      const std::size_t n = ar.read_length("std::vector", sizeof(T), sizeof(T));
      const std::byte* p = ar.take(n * sizeof(T), "std::vector");
      v.assign(unaligned_iterator<T>{p}, unaligned_iterator<T>{p + n * sizeof(T)});
    } else {
      load_elements(ar, v, ar.read_length("std::vector", E::min_size, sizeof(T)));
    }
  }
  static void load_elements(input_archive& ar, std::vector<T, A>& v, std::size_t n) {
    // Elements already there (a reused vector) are loaded in place and keep their own storage,
    // as with cereal; the rest are appended, so the vector grows only as fast as the payload
    // really supplies elements.
    if (v.size() > n) v.erase(v.begin() + static_cast<std::ptrdiff_t>(n), v.end());
    const std::size_t reused = v.size();
    for (std::size_t i = 0; i < reused; ++i) load_element(ar, v[i], "std::vector");
    if (n > reused) v.reserve(reused + safe_reserve<T>(n - reused, E::min_size));
    for (std::size_t i = reused; i < n; ++i) load_element(ar, v.emplace_back(), "std::vector");
  }
};

template <class A>
struct codec<std::vector<bool, A>> {
  static constexpr bool saveable = true, loadable = true;
  static constexpr std::size_t min_size = 8;
  static void save(output_archive& ar, const std::vector<bool, A>& v) {
    const std::size_t n = v.size();
    write_length(ar, n);
    std::byte* p = ar.grow((n + 7) / 8);
    for (std::size_t i = 0; i < n; i += 8) {
      unsigned byte = 0;
      for (std::size_t b = 0; b < 8 && i + b < n; ++b) byte |= static_cast<unsigned>(v[i + b]) << b;
      p[i / 8] = static_cast<std::byte>(byte);
    }
  }
  static void load(input_archive& ar, std::vector<bool, A>& v) {
    std::uint64_t n;
    std::memcpy(&n, ar.take(8, "std::vector<bool>"), 8);
    if (n / 8 + (n % 8 != 0) > ar.remaining()) [[unlikely]]
      throw_length("std::vector<bool> (in bits)", n, 0, ar.remaining() * 8, ar.position());
    const std::byte* p = ar.take(static_cast<std::size_t>((n + 7) / 8), "std::vector<bool>");
    if (n % 8 != 0 && (static_cast<unsigned>(p[n / 8]) >> (n % 8)) != 0)
      throw_corrupt("std::vector<bool>", "has bits set past its length", ar.position() - 1);
    v.assign(static_cast<std::size_t>(n), false);
    for (std::size_t i = 0; i < n; ++i) v[i] = ((static_cast<unsigned>(p[i / 8]) >> (i % 8)) & 1u) != 0;
  }
};

template <class T>
struct codec<std::valarray<T>> {
  using E = codec<T>;
  static constexpr bool saveable = E::saveable;
  static constexpr bool loadable = E::loadable && std::is_default_constructible_v<T>;
  static constexpr std::size_t min_size = 8;
  static void save(output_archive& ar, const std::valarray<T>& v) {
    if constexpr (is_block_v<T>) {
      save_block(ar, v.size() ? &v[0] : static_cast<const T*>(nullptr), v.size());
    } else {
      write_length(ar, v.size());
      save_elements(ar, std::begin(v), std::end(v), v.size());
    }
  }
  static void load(input_archive& ar, std::valarray<T>& v) {
    const std::size_t n = ar.read_length("std::valarray", E::min_size, sizeof(T));
    if constexpr (is_block_v<T>) {
      const std::byte* p = ar.take(n * sizeof(T), "std::valarray");
      v.resize(n);
      if (n != 0) std::memcpy(&v[0], p, n * sizeof(T));
    } else {  // through a vector, which knows how far an untrusted count may be trusted
      std::vector<T> tmp;
      codec<std::vector<T>>::load_elements(ar, tmp, n);
      v.resize(n);
      std::move(tmp.begin(), tmp.end(), std::begin(v));
    }
  }
};

}  // namespace cppless::detail
