// cppless/archive/types/associative.hpp — codecs for map, multimap, set, multiset and the unordered ones.
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <cstddef>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

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

}  // namespace cppless::detail
