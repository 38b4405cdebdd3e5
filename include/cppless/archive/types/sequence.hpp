// cppless/archive/types/sequence.hpp — codecs for std::list, std::deque, std::forward_list, and the adapters stack, queue, priority_queue.
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <deque>
#include <forward_list>
#include <list>
#include <queue>
#include <stack>

#include "cppless/archive/types/support.hpp"
#include "cppless/archive/types/vector.hpp"

namespace cppless::detail {

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

}  // namespace cppless::detail
