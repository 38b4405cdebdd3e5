// cppless/archive/std_types.hpp — codecs for the fundamental types and the standard library.
// Part of <cppless/archive.hpp>; the byte layout of each is listed in archive/core.hpp.
//
// Smart pointers have value semantics: a pointer travels as a null flag plus a copy of the
// object. There is no identity tracking, so two shared_ptrs to one object arrive as two objects,
// and a cycle of shared_ptrs never ends; a unique_ptr<Base> pointing to a Derived is refused at
// encode time (cppless::error) rather than sliced.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <bitset>
#include <chrono>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <forward_list>
#include <iterator>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <stack>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <valarray>
#include <variant>
#include <vector>

#include "cppless/archive/user_types.hpp"

namespace cppless::detail {

// ---------------------------------------------------------------------------------------------
// Helpers

// Types encoded as their own bytes: a contiguous run of them is one memcpy.
template <class T>
constexpr bool bitwise() {
  if constexpr (std::is_const_v<T> || std::is_volatile_v<T>) return false;
  else if constexpr (std::is_enum_v<T>) return !std::is_same_v<std::underlying_type_t<T>, bool>;
  else return std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
}
template <class T>
inline constexpr bool is_bitwise_v = bitwise<T>();

// Element types whose arrays are copied as one block: the bitwise ones and std::complex of them
// (whose layout the standard fixes as T[2]).
template <class T>
inline constexpr bool is_block_v = is_bitwise_v<T>;
template <class T>
inline constexpr bool is_block_v<std::complex<T>> = is_bitwise_v<T>;

constexpr std::size_t sat_add(std::size_t a, std::size_t b) {
  return a > std::numeric_limits<std::size_t>::max() - b ? std::numeric_limits<std::size_t>::max() : a + b;
}
constexpr std::size_t sat_mul(std::size_t a, std::size_t b) {
  return b != 0 && a > std::numeric_limits<std::size_t>::max() / b ? std::numeric_limits<std::size_t>::max() : a * b;
}

inline void write_length(output_archive& ar, std::size_t n) {
  const std::uint64_t len = n;
  std::memcpy(ar.grow(sizeof len), &len, sizeof len);
}

// Length prefix and the elements' bytes, in one capacity check.
template <class T>
void save_block(output_archive& ar, const T* data, std::size_t n) {
  const std::size_t bytes = n * sizeof(T);
  std::byte* p = ar.grow(sizeof(std::uint64_t) + bytes);
  const std::uint64_t len = n;
  std::memcpy(p, &len, sizeof len);
  if (bytes != 0) std::memcpy(p + sizeof len, data, bytes);
}

// Reads T values out of unaligned payload bytes. vector::assign(it, it) with it then allocates
// once and copies in one pass (the compiler turns the loop into vector moves): half the memory
// traffic of resize() (which zeroes) followed by memcpy.
template <class T>
struct unaligned_iterator {
  using iterator_category = std::random_access_iterator_tag;
  using value_type = T;
  using difference_type = std::ptrdiff_t;
  using pointer = const T*;
  using reference = T;

  const std::byte* p;

  T operator*() const noexcept {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  }
  T operator[](difference_type n) const noexcept { return *(*this + n); }
  unaligned_iterator& operator++() noexcept { return p += sizeof(T), *this; }
  unaligned_iterator& operator--() noexcept { return p -= sizeof(T), *this; }
  unaligned_iterator operator++(int) noexcept { auto c = *this; return ++*this, c; }
  unaligned_iterator operator--(int) noexcept { auto c = *this; return --*this, c; }
  unaligned_iterator& operator+=(difference_type n) noexcept { return p += n * static_cast<difference_type>(sizeof(T)), *this; }
  unaligned_iterator& operator-=(difference_type n) noexcept { return p -= n * static_cast<difference_type>(sizeof(T)), *this; }
  friend unaligned_iterator operator+(unaligned_iterator i, difference_type n) noexcept { return i += n; }
  friend unaligned_iterator operator+(difference_type n, unaligned_iterator i) noexcept { return i += n; }
  friend unaligned_iterator operator-(unaligned_iterator i, difference_type n) noexcept { return i -= n; }
  friend difference_type operator-(unaligned_iterator a, unaligned_iterator b) noexcept {
    return (a.p - b.p) / static_cast<difference_type>(sizeof(T));
  }
  friend auto operator<=>(unaligned_iterator a, unaligned_iterator b) noexcept = default;
};

inline bool read_flag(input_archive& ar, const char* what) {
  const auto b = static_cast<std::uint8_t>(*ar.take(1, what));
  if (b > 1) [[unlikely]]
    throw_corrupt(what, "flag is " + std::to_string(b) + " (must be 0 or 1)", ar.position() - 1);
  return b != 0;
}

// Saves n elements; after the first, reserves room for the rest assuming they are alike, which
// turns the buffer's geometric growth (and its copies) into one allocation for uniform data.
template <class It>
void save_elements(output_archive& ar, It first, It last, std::size_t n) {
  if (first == last) return;
  byte_buffer& buf = ar.buffer();
  const std::size_t before = buf.size();
  save_value(ar, *first);
  const std::size_t one = buf.size() - before;
  constexpr std::size_t max_guess = std::size_t{1} << 30;  // beyond this, let the buffer double
  if (n > 1 && one != 0 && one <= max_guess / (n - 1)) ar.reserve_hint(buf.size() + one * (n - 1));
  for (++first; first != last; ++first) save_value(ar, *first);
}

// How many elements to reserve for a decoded count n (already checked against the bytes left):
// all of them when their memory is within 16x their minimal encoding, else at most 16 MiB worth
// (beyond that the container grows as elements really arrive), so a small payload cannot make
// the decoder reserve gigabytes it will never fill. User types (min_size 0, unknown) of 100k
// elements of 160 bytes still get a single allocation.
inline constexpr std::size_t max_speculative_bytes = std::size_t{1} << 24;

template <class T>
std::size_t safe_reserve(std::size_t n, std::size_t min_size) {
  if (min_size != 0 && sizeof(T) <= 16 * min_size) return n;
  return std::min(n, std::max<std::size_t>(1, max_speculative_bytes / sizeof(T)));
}

// What one element of a node-based container costs beyond its value: links, hash, allocator
// rounding (an estimate; it only has to be of the right size).
inline constexpr std::size_t node_overhead = 4 * sizeof(void*);

// Loads one element of a container, charging the archive's budget when it took no bytes.
template <class T>
void load_element(input_archive& ar, T& x, const char* what, std::size_t overhead = 0) {
  if constexpr (codec<T>::min_size == 0) {
    const std::size_t before = ar.position();
    load_value(ar, x);
    if (ar.position() == before) ar.charge_empty_element(sizeof(T) + overhead, what);
  } else {
    load_value(ar, x);
  }
}

// Without RTTI (-fno-rtti) the check cannot be made and a derived object would be sliced.
template <class T>
void check_exact_type([[maybe_unused]] const T& value, [[maybe_unused]] const char* what) {
#if defined(__cpp_rtti) || defined(__GXX_RTTI)
  if constexpr (std::is_polymorphic_v<T> && !std::is_final_v<T>) {
    if (typeid(value) != typeid(T))
      throw error(std::string("cppless: cannot serialize a ") + what + " to a " + typeid(value).name() +
                  " through a pointer to its base " + typeid(T).name() +
                  ": only the base part would travel (polymorphic pointers are not supported)");
  }
#endif
}

// ---------------------------------------------------------------------------------------------
// Fundamental types

template <class T>
  requires(is_bitwise_v<T>)
struct codec<T> {
  static constexpr bool saveable = true, loadable = true;
  static constexpr std::size_t min_size = sizeof(T);
  static void save(output_archive& ar, const T& v) { std::memcpy(ar.grow(sizeof(T)), &v, sizeof(T)); }
  static void load(input_archive& ar, T& v) { std::memcpy(&v, ar.take(sizeof(T), type_label<T>()), sizeof(T)); }
};

// bool, and enums whose underlying type is bool: one byte that must be 0 or 1.
template <class T>
  requires(std::is_same_v<T, bool> || (std::is_enum_v<T> && !is_bitwise_v<T> && !std::is_const_v<T> && !std::is_volatile_v<T>))
struct codec<T> {
  static constexpr bool saveable = true, loadable = true;
  static constexpr std::size_t min_size = 1;
  static void save(output_archive& ar, const T& v) { *ar.grow(1) = static_cast<bool>(v) ? std::byte{1} : std::byte{0}; }
  static void load(input_archive& ar, T& v) {
    const auto b = static_cast<std::uint8_t>(*ar.take(1, "bool"));
    if (b > 1) [[unlikely]]
      throw_corrupt("bool", "byte is " + std::to_string(b) + " (must be 0 or 1)", ar.position() - 1);
    v = static_cast<T>(b != 0);
  }
};

// A const object (a pair<const K, V> inside a map, a const capture) can be saved, not loaded.
template <class T>
struct codec<const T> {
  static constexpr bool saveable = codec<T>::saveable, loadable = false;
  static constexpr std::size_t min_size = codec<T>::min_size;
  static void save(output_archive& ar, const T& v) { codec<T>::save(ar, v); }
};

// ---------------------------------------------------------------------------------------------
// Fixed-size arrays: the elements, no length.

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

// ---------------------------------------------------------------------------------------------
// Strings and vectors

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

// ---------------------------------------------------------------------------------------------
// Other sequences

template <class C, const char* What>
struct sequence_codec {
  using T = typename C::value_type;
  using E = codec<T>;
  static constexpr bool saveable = E::saveable;
  static constexpr bool loadable = E::loadable && std::is_default_constructible_v<T>;
  static constexpr std::size_t min_size = 8;
  static void save(output_archive& ar, const C& c) {
    const auto n = static_cast<std::size_t>(std::distance(c.begin(), c.end()));
    write_length(ar, n);
    save_elements(ar, c.begin(), c.end(), n);
  }
  static void load(input_archive& ar, C& c) {
    const std::size_t n = ar.read_length(What, E::min_size, sizeof(T) + node_overhead);
    c.clear();
    if constexpr (requires { c.emplace_back(); }) {
      for (std::size_t i = 0; i < n; ++i) load_element(ar, c.emplace_back(), What, node_overhead);
    } else {  // std::forward_list
      auto tail = c.before_begin();
      for (std::size_t i = 0; i < n; ++i) load_element(ar, *(tail = c.emplace_after(tail)), What, node_overhead);
    }
  }
};

inline constexpr char list_name[] = "std::list";
inline constexpr char deque_name[] = "std::deque";
inline constexpr char forward_list_name[] = "std::forward_list";

template <class T, class A>
struct codec<std::list<T, A>> : sequence_codec<std::list<T, A>, list_name> {};
template <class T, class A>
struct codec<std::deque<T, A>> : sequence_codec<std::deque<T, A>, deque_name> {};
template <class T, class A>
struct codec<std::forward_list<T, A>> : sequence_codec<std::forward_list<T, A>, forward_list_name> {};

// Container adapters travel as their underlying container.
template <class Adapter>
struct adapter_parts : Adapter {
  static auto& container(Adapter& a) { return a.*(&adapter_parts::c); }
  static const auto& container(const Adapter& a) { return a.*(&adapter_parts::c); }
  static auto& compare(Adapter& a) { return a.*(&adapter_parts::comp); }
};

template <class Adapter>
struct adapter_codec {
  using C = typename Adapter::container_type;
  static constexpr bool saveable = codec<C>::saveable, loadable = codec<C>::loadable;
  static constexpr std::size_t min_size = codec<C>::min_size;
  static void save(output_archive& ar, const Adapter& a) { save_value(ar, adapter_parts<Adapter>::container(a)); }
  static void load(input_archive& ar, Adapter& a) { load_value(ar, adapter_parts<Adapter>::container(a)); }
};

template <class T, class C>
struct codec<std::stack<T, C>> : adapter_codec<std::stack<T, C>> {};
template <class T, class C>
struct codec<std::queue<T, C>> : adapter_codec<std::queue<T, C>> {};
template <class T, class C, class Cmp>
struct codec<std::priority_queue<T, C, Cmp>> : adapter_codec<std::priority_queue<T, C, Cmp>> {
  using Q = std::priority_queue<T, C, Cmp>;
  static void load(input_archive& ar, Q& q) {
    auto& c = adapter_parts<Q>::container(q);
    load_value(ar, c);
    std::make_heap(c.begin(), c.end(), adapter_parts<Q>::compare(q));  // untrusted order: restore the invariant
  }
};

// ---------------------------------------------------------------------------------------------
// Associative containers. Ordered ones must arrive in their order (strictly increasing keys for
// map/set), which costs nothing (each insert is at the end) and rejects corrupt payloads.

template <class M, bool Unique, const char* What>
struct ordered_codec {
  using K = typename M::key_type;
  static constexpr bool is_map = requires { typename M::mapped_type; };
  using V = typename std::conditional_t<is_map, M, std::map<int, int>>::mapped_type;
  static constexpr bool saveable = codec<K>::saveable && (!is_map || codec<V>::saveable);
  static constexpr bool loadable = codec<K>::loadable && std::is_default_constructible_v<K> &&
                                   (!is_map || (codec<V>::loadable && std::is_default_constructible_v<V>));
  static constexpr std::size_t min_size = 8;
  static constexpr std::size_t element_min = sat_add(codec<K>::min_size, is_map ? codec<V>::min_size : 0);

  static void save(output_archive& ar, const M& m) {
    write_length(ar, m.size());
    save_elements(ar, m.begin(), m.end(), m.size());
  }
  static void load(input_archive& ar, M& m) {
    const std::size_t n = ar.read_length(What, element_min, sizeof(typename M::value_type) + node_overhead);
    m.clear();
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t at = ar.position();
      K key{};
      load_value(ar, key);
      if (!m.empty()) {
        const K& last = key_of(*std::prev(m.end()));
        const bool in_order = Unique ? m.key_comp()(last, key) : !m.key_comp()(key, last);
        if (!in_order) [[unlikely]]
          throw_corrupt(What, Unique ? "keys are not strictly increasing (out of order or repeated)" : "keys are out of order", at);
      }
      if constexpr (is_map) {
        auto it = m.emplace_hint(m.end(), std::piecewise_construct, std::forward_as_tuple(std::move(key)), std::tuple<>());
        load_value(ar, it->second);
      } else {
        m.emplace_hint(m.end(), std::move(key));
      }
      if constexpr (element_min == 0) {
        if (ar.position() == at) ar.charge_empty_element(sizeof(typename M::value_type) + node_overhead, What);
      }
    }
  }
  template <class E>
  static const K& key_of(const E& e) {
    if constexpr (is_map) return e.first;
    else return e;
  }
};

template <class M, bool Unique, const char* What>
struct unordered_codec {
  using K = typename M::key_type;
  static constexpr bool is_map = requires { typename M::mapped_type; };
  using V = typename std::conditional_t<is_map, M, std::map<int, int>>::mapped_type;
  static constexpr bool saveable = codec<K>::saveable && (!is_map || codec<V>::saveable);
  static constexpr bool loadable = codec<K>::loadable && std::is_default_constructible_v<K> &&
                                   (!is_map || (codec<V>::loadable && std::is_default_constructible_v<V>));
  static constexpr std::size_t min_size = 8;
  static constexpr std::size_t element_min = sat_add(codec<K>::min_size, is_map ? codec<V>::min_size : 0);

  static void save(output_archive& ar, const M& m) {
    write_length(ar, m.size());
    save_elements(ar, m.begin(), m.end(), m.size());
  }
  static void load(input_archive& ar, M& m) {
    const std::size_t n = ar.read_length(What, element_min, sizeof(typename M::value_type) + node_overhead);
    m.clear();
    m.reserve(safe_reserve<typename M::value_type>(n, element_min));
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t at = ar.position();
      K key{};
      load_value(ar, key);
      auto placed = [&] {
        if constexpr (is_map) return m.emplace(std::piecewise_construct, std::forward_as_tuple(std::move(key)), std::tuple<>());
        else return m.emplace(std::move(key));
      }();
      if constexpr (Unique) {
        if (!placed.second) [[unlikely]]
          throw_corrupt(What, "has a repeated key", at);
        if constexpr (is_map) load_value(ar, placed.first->second);
      } else {
        if constexpr (is_map) load_value(ar, placed->second);
      }
      if constexpr (element_min == 0) {
        if (ar.position() == at) ar.charge_empty_element(sizeof(typename M::value_type) + node_overhead, What);
      }
    }
  }
};

inline constexpr char map_name[] = "std::map";
inline constexpr char multimap_name[] = "std::multimap";
inline constexpr char set_name[] = "std::set";
inline constexpr char multiset_name[] = "std::multiset";
inline constexpr char unordered_map_name[] = "std::unordered_map";
inline constexpr char unordered_multimap_name[] = "std::unordered_multimap";
inline constexpr char unordered_set_name[] = "std::unordered_set";
inline constexpr char unordered_multiset_name[] = "std::unordered_multiset";

template <class K, class V, class C, class A>
struct codec<std::map<K, V, C, A>> : ordered_codec<std::map<K, V, C, A>, true, map_name> {};
template <class K, class V, class C, class A>
struct codec<std::multimap<K, V, C, A>> : ordered_codec<std::multimap<K, V, C, A>, false, multimap_name> {};
template <class K, class C, class A>
struct codec<std::set<K, C, A>> : ordered_codec<std::set<K, C, A>, true, set_name> {};
template <class K, class C, class A>
struct codec<std::multiset<K, C, A>> : ordered_codec<std::multiset<K, C, A>, false, multiset_name> {};
template <class K, class V, class H, class E, class A>
struct codec<std::unordered_map<K, V, H, E, A>> : unordered_codec<std::unordered_map<K, V, H, E, A>, true, unordered_map_name> {};
template <class K, class V, class H, class E, class A>
struct codec<std::unordered_multimap<K, V, H, E, A>>
    : unordered_codec<std::unordered_multimap<K, V, H, E, A>, false, unordered_multimap_name> {};
template <class K, class H, class E, class A>
struct codec<std::unordered_set<K, H, E, A>> : unordered_codec<std::unordered_set<K, H, E, A>, true, unordered_set_name> {};
template <class K, class H, class E, class A>
struct codec<std::unordered_multiset<K, H, E, A>>
    : unordered_codec<std::unordered_multiset<K, H, E, A>, false, unordered_multiset_name> {};

// ---------------------------------------------------------------------------------------------
// pair, tuple

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

// ---------------------------------------------------------------------------------------------
// optional, variant, smart pointers

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

template <class T>
struct codec<std::unique_ptr<T>> {
  static constexpr bool saveable = codec<T>::saveable && !std::is_abstract_v<T>;
  static constexpr bool loadable = codec<T>::loadable && std::is_default_constructible_v<T>;
  static constexpr std::size_t min_size = 1;
  static void save(output_archive& ar, const std::unique_ptr<T>& p) {
    if (p) check_exact_type(*p, "std::unique_ptr");
    *ar.grow(1) = p ? std::byte{1} : std::byte{0};
    if (p) save_value(ar, *p);
  }
  static void load(input_archive& ar, std::unique_ptr<T>& p) {
    if (!read_flag(ar, "std::unique_ptr")) {
      p.reset();
    } else {
      auto fresh = std::make_unique<T>();
      load_value(ar, *fresh);
      p = std::move(fresh);
    }
  }
};
template <class T>
struct codec<std::unique_ptr<T[]>> : codec<void> {};  // the length is unknown

template <class T>
struct codec<std::shared_ptr<T>> {
  using U = std::remove_const_t<T>;
  static constexpr bool saveable = codec<U>::saveable && !std::is_abstract_v<U>;
  static constexpr bool loadable = codec<U>::loadable && std::is_default_constructible_v<U>;
  static constexpr std::size_t min_size = 1;
  static void save(output_archive& ar, const std::shared_ptr<T>& p) {
    if (p) check_exact_type<U>(*p, "std::shared_ptr");
    *ar.grow(1) = p ? std::byte{1} : std::byte{0};
    if (p) save_value(ar, static_cast<const U&>(*p));
  }
  static void load(input_archive& ar, std::shared_ptr<T>& p) {
    if (!read_flag(ar, "std::shared_ptr")) {
      p.reset();
    } else {
      auto fresh = std::make_shared<U>();
      load_value(ar, *fresh);
      p = std::move(fresh);
    }
  }
};
template <class T>
struct codec<std::shared_ptr<T[]>> : codec<void> {};

// ---------------------------------------------------------------------------------------------
// chrono, complex, bitset, atomic

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
