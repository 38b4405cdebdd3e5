// cppless/archive/user_types.hpp — user types, found the way cereal finds them, so a type that
// already works with cereal works here unchanged. Part of <cppless/archive.hpp>.
//
// Recognised, in this order of preference (cereal refuses a type with several; we take the first):
//   member  serialize(A&)           [, std::uint32_t const version]
//   member  save(A&) const          + load(A&)          [, version]
//   member  save_minimal(A const&) const + load_minimal(A const&, V const&)   [, version]
//   free    serialize(A&, T&)  /  save(A&, T const&) + load(A&, T&)  /  save_minimal + load_minimal,
//           found by argument-dependent lookup (in T's namespace, or in namespace cereal)
// Private members are reached through `friend class cppless::access;` or `friend class cereal::access;`.
// During save, serialize() is called on a const object through const_cast, as cereal does.
// The version passed is cereal's registered class version (CEREAL_CLASS_VERSION) or 0: both ends
// are the same build, so the current version is always the right one.
// Not supported: load_and_construct (types need a default constructor to be loaded inside
// containers), cereal::defer, cereal's own CEREAL_REGISTER_TYPE (cppless has its own:
// CPPLESS_REGISTER_TYPE, archive/types/polymorphic.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "cppless/archive/core.hpp"

namespace cppless {

// Befriend this (or cereal::access) to keep serialize/save/load private.
class access {
 public:
  template <class A, class T>
  static auto member_serialize(A& ar, T& t) -> decltype(t.serialize(ar)) { return t.serialize(ar); }
  template <class A, class T>
  static auto member_serialize(A& ar, T& t, std::uint32_t v) -> decltype(t.serialize(ar, v)) { return t.serialize(ar, v); }
  template <class A, class T>
  static auto member_save(A& ar, const T& t) -> decltype(t.save(ar)) { return t.save(ar); }
  template <class A, class T>
  static auto member_save(A& ar, const T& t, std::uint32_t v) -> decltype(t.save(ar, v)) { return t.save(ar, v); }
  template <class A, class T>
  static auto member_load(A& ar, T& t) -> decltype(t.load(ar)) { return t.load(ar); }
  template <class A, class T>
  static auto member_load(A& ar, T& t, std::uint32_t v) -> decltype(t.load(ar, v)) { return t.load(ar, v); }
  template <class A, class T>
  static auto member_save_minimal(const A& ar, const T& t) -> decltype(t.save_minimal(ar)) { return t.save_minimal(ar); }
  template <class A, class T>
  static auto member_save_minimal(const A& ar, const T& t, std::uint32_t v) -> decltype(t.save_minimal(ar, v)) {
    return t.save_minimal(ar, v);
  }
  template <class A, class T, class U>
  static auto member_load_minimal(const A& ar, T& t, const U& u) -> decltype(t.load_minimal(ar, u)) {
    return t.load_minimal(ar, u);
  }
  template <class A, class T, class U>
  static auto member_load_minimal(const A& ar, T& t, const U& u, std::uint32_t v) -> decltype(t.load_minimal(ar, u, v)) {
    return t.load_minimal(ar, u, v);
  }
};

namespace detail {

// Member functions, reached through cppless::access or, failing that, cereal::access (which the
// user's class may have befriended). Each use of the macro defines a has_X concept and a call_X
// function taking the same parameters.
#if CPPLESS_HAS_CEREAL
#define CPPLESS_DETAIL_VIA_CEREAL(name, fn, params, args)                             \
  template <class A, class T, class... U>                                             \
  concept name##_via_cereal = requires params { ::cereal::access::fn args; };         \
  template <class A, class T, class... U>                                             \
  decltype(auto) name##_cereal params { return ::cereal::access::fn args; }
#else
#define CPPLESS_DETAIL_VIA_CEREAL(name, fn, params, args) \
  template <class A, class T, class... U>                 \
  concept name##_via_cereal = false;                      \
  template <class A, class T, class... U>                 \
  void name##_cereal params; /* never called: the concept above is false */
#endif
#define CPPLESS_DETAIL_MEMBER_HOOK(name, fn, params, args)                                        \
  template <class A, class T, class... U>                                                         \
  concept name##_via_cppless = requires params { ::cppless::access::fn args; };                   \
  CPPLESS_DETAIL_VIA_CEREAL(name, fn, params, args)                                               \
  template <class A, class T, class... U>                                                         \
  concept has_##name = name##_via_cppless<A, T, U...> || name##_via_cereal<A, T, U...>;           \
  template <class A, class T, class... U>                                                         \
  decltype(auto) call_##name params {                                                             \
    if constexpr (name##_via_cppless<A, T, U...>) return ::cppless::access::fn args;              \
    else return name##_cereal<A, T, U...> args;                                                   \
  }

CPPLESS_DETAIL_MEMBER_HOOK(member_serialize, member_serialize, (A & ar, T & t), (ar, t))
CPPLESS_DETAIL_MEMBER_HOOK(member_serialize_v, member_serialize, (A & ar, T & t, std::uint32_t v), (ar, t, v))
CPPLESS_DETAIL_MEMBER_HOOK(member_save, member_save, (A & ar, const T& t), (ar, t))
CPPLESS_DETAIL_MEMBER_HOOK(member_save_v, member_save, (A & ar, const T& t, std::uint32_t v), (ar, t, v))
CPPLESS_DETAIL_MEMBER_HOOK(member_load, member_load, (A & ar, T & t), (ar, t))
CPPLESS_DETAIL_MEMBER_HOOK(member_load_v, member_load, (A & ar, T & t, std::uint32_t v), (ar, t, v))
CPPLESS_DETAIL_MEMBER_HOOK(member_save_minimal, member_save_minimal, (const A& ar, const T& t), (ar, t))
CPPLESS_DETAIL_MEMBER_HOOK(member_save_minimal_v, member_save_minimal, (const A& ar, const T& t, std::uint32_t v), (ar, t, v))
CPPLESS_DETAIL_MEMBER_HOOK(member_load_minimal, member_load_minimal, (const A& ar, T& t, const U&... u), (ar, t, u...))
CPPLESS_DETAIL_MEMBER_HOOK(member_load_minimal_v, member_load_minimal, (const A& ar, T& t, std::uint32_t v, const U&... u),
                           (ar, t, u..., v))
#undef CPPLESS_DETAIL_VIA_CEREAL
#undef CPPLESS_DETAIL_MEMBER_HOOK

// Free functions, found by argument-dependent lookup only: the deleted declarations hide any
// serialize/save/load an enclosing namespace (cppless, the global one) might declare.
namespace adl {
void serialize() = delete;
void save() = delete;
void load() = delete;
void save_minimal() = delete;
void load_minimal() = delete;

template <class A, class T>
concept has_free_serialize = requires(A& ar, T& t) { serialize(ar, t); };
template <class A, class T>
concept has_free_serialize_v = requires(A& ar, T& t, std::uint32_t v) { serialize(ar, t, v); };
template <class A, class T>
concept has_free_save = requires(A& ar, const T& t) { save(ar, t); };
template <class A, class T>
concept has_free_save_v = requires(A& ar, const T& t, std::uint32_t v) { save(ar, t, v); };
template <class A, class T>
concept has_free_load = requires(A& ar, T& t) { load(ar, t); };
template <class A, class T>
concept has_free_load_v = requires(A& ar, T& t, std::uint32_t v) { load(ar, t, v); };
template <class A, class T>
concept has_free_save_minimal = requires(const A& ar, const T& t) { save_minimal(ar, t); };
template <class A, class T>
concept has_free_save_minimal_v = requires(const A& ar, const T& t, std::uint32_t v) { save_minimal(ar, t, v); };
template <class A, class T, class U>
concept has_free_load_minimal = requires(const A& ar, T& t, const U& u) { load_minimal(ar, t, u); };
template <class A, class T, class U>
concept has_free_load_minimal_v = requires(const A& ar, T& t, const U& u, std::uint32_t v) { load_minimal(ar, t, u, v); };

template <class A, class T>
void call_free_serialize(A& ar, T& t) { serialize(ar, t); }
template <class A, class T>
void call_free_serialize(A& ar, T& t, std::uint32_t v) { serialize(ar, t, v); }
template <class A, class T>
void call_free_save(A& ar, const T& t) { save(ar, t); }
template <class A, class T>
void call_free_save(A& ar, const T& t, std::uint32_t v) { save(ar, t, v); }
template <class A, class T>
void call_free_load(A& ar, T& t) { load(ar, t); }
template <class A, class T>
void call_free_load(A& ar, T& t, std::uint32_t v) { load(ar, t, v); }
template <class A, class T>
decltype(auto) call_free_save_minimal(const A& ar, const T& t) { return save_minimal(ar, t); }
template <class A, class T>
decltype(auto) call_free_save_minimal(const A& ar, const T& t, std::uint32_t v) { return save_minimal(ar, t, v); }
template <class A, class T, class U>
void call_free_load_minimal(const A& ar, T& t, const U& u) { load_minimal(ar, t, u); }
template <class A, class T, class U>
void call_free_load_minimal(const A& ar, T& t, const U& u, std::uint32_t v) { load_minimal(ar, t, u, v); }
}  // namespace adl

template <class T>
std::uint32_t class_version() {
#if CPPLESS_HAS_CEREAL
  return ::cereal::detail::Version<T>::version;
#else
  return 0;
#endif
}

enum class convention {
  none,
  member_serialize,
  member_serialize_v,
  member_split,
  member_split_v,
  member_minimal,
  member_minimal_v,
  free_serialize,
  free_serialize_v,
  free_split,
  free_split_v,
  free_minimal,
  free_minimal_v,
};

using out_ar = output_archive;
using in_ar = input_archive;

template <class T>
constexpr convention save_convention() {
  if constexpr (!std::is_class_v<T> && !std::is_union_v<T>) return convention::none;
  else if constexpr (has_member_serialize<out_ar, T>) return convention::member_serialize;
  else if constexpr (has_member_serialize_v<out_ar, T>) return convention::member_serialize_v;
  else if constexpr (has_member_save<out_ar, T>) return convention::member_split;
  else if constexpr (has_member_save_v<out_ar, T>) return convention::member_split_v;
  else if constexpr (has_member_save_minimal<out_ar, T>) return convention::member_minimal;
  else if constexpr (has_member_save_minimal_v<out_ar, T>) return convention::member_minimal_v;
  else if constexpr (adl::has_free_serialize<out_ar, T>) return convention::free_serialize;
  else if constexpr (adl::has_free_serialize_v<out_ar, T>) return convention::free_serialize_v;
  else if constexpr (adl::has_free_save<out_ar, T>) return convention::free_split;
  else if constexpr (adl::has_free_save_v<out_ar, T>) return convention::free_split_v;
  else if constexpr (adl::has_free_save_minimal<out_ar, T>) return convention::free_minimal;
  else if constexpr (adl::has_free_save_minimal_v<out_ar, T>) return convention::free_minimal_v;
  else return convention::none;
}

// The type a save_minimal returns, which load_minimal takes back.
template <class T, convention C = save_convention<T>()>
struct minimal_type {
  using type = void;
};
template <class T>
struct minimal_type<T, convention::member_minimal> {
  using type = std::decay_t<decltype(call_member_save_minimal(std::declval<const out_ar&>(), std::declval<const T&>()))>;
};
template <class T>
struct minimal_type<T, convention::member_minimal_v> {
  using type = std::decay_t<decltype(call_member_save_minimal_v(std::declval<const out_ar&>(), std::declval<const T&>(),
                                                                std::uint32_t{}))>;
};
template <class T>
struct minimal_type<T, convention::free_minimal> {
  using type = std::decay_t<decltype(adl::call_free_save_minimal(std::declval<const out_ar&>(), std::declval<const T&>()))>;
};
template <class T>
struct minimal_type<T, convention::free_minimal_v> {
  using type = std::decay_t<decltype(adl::call_free_save_minimal(std::declval<const out_ar&>(), std::declval<const T&>(),
                                                                 std::uint32_t{}))>;
};

template <class T>
constexpr convention load_convention() {
  using M = typename minimal_type<T>::type;
  if constexpr (!std::is_class_v<T> && !std::is_union_v<T>) return convention::none;
  else if constexpr (has_member_serialize<in_ar, T>) return convention::member_serialize;
  else if constexpr (has_member_serialize_v<in_ar, T>) return convention::member_serialize_v;
  else if constexpr (has_member_load<in_ar, T>) return convention::member_split;
  else if constexpr (has_member_load_v<in_ar, T>) return convention::member_split_v;
  else if constexpr (!std::is_void_v<M> && has_member_load_minimal<in_ar, T, M>) return convention::member_minimal;
  else if constexpr (!std::is_void_v<M> && has_member_load_minimal_v<in_ar, T, M>) return convention::member_minimal_v;
  else if constexpr (adl::has_free_serialize<in_ar, T>) return convention::free_serialize;
  else if constexpr (adl::has_free_serialize_v<in_ar, T>) return convention::free_serialize_v;
  else if constexpr (adl::has_free_load<in_ar, T>) return convention::free_split;
  else if constexpr (adl::has_free_load_v<in_ar, T>) return convention::free_split_v;
  else if constexpr (!std::is_void_v<M> && adl::has_free_load_minimal<in_ar, T, M>) return convention::free_minimal;
  else if constexpr (!std::is_void_v<M> && adl::has_free_load_minimal_v<in_ar, T, M>) return convention::free_minimal_v;
  else return convention::none;
}

template <class M>
inline constexpr bool minimal_saveable = codec<M>::saveable;
template <>
inline constexpr bool minimal_saveable<void> = true;
template <class M>
inline constexpr bool minimal_loadable = codec<M>::loadable && std::is_default_constructible_v<M>;
template <>
inline constexpr bool minimal_loadable<void> = true;

// The primary codec: user types. The encoding of a user type may be empty, so min_size is 0.
template <class T>
struct codec {
  static constexpr convention on_save = save_convention<T>();
  static constexpr convention on_load = load_convention<T>();
  using minimal = typename minimal_type<T>::type;
  static constexpr bool saveable = on_save != convention::none && minimal_saveable<minimal>;
  static constexpr bool loadable = on_load != convention::none && minimal_loadable<minimal>;
  static constexpr std::size_t min_size = 0;

  static void save(out_ar& ar, const T& t) {
    T& mut = const_cast<T&>(t);  // cereal calls serialize() on the object being saved, const or not
    constexpr convention c = on_save;
    if constexpr (c == convention::member_serialize) call_member_serialize(ar, mut);
    else if constexpr (c == convention::member_serialize_v) call_member_serialize_v(ar, mut, class_version<T>());
    else if constexpr (c == convention::member_split) call_member_save(ar, t);
    else if constexpr (c == convention::member_split_v) call_member_save_v(ar, t, class_version<T>());
    else if constexpr (c == convention::member_minimal) save_value(ar, call_member_save_minimal(std::as_const(ar), t));
    else if constexpr (c == convention::member_minimal_v)
      save_value(ar, call_member_save_minimal_v(std::as_const(ar), t, class_version<T>()));
    else if constexpr (c == convention::free_serialize) adl::call_free_serialize(ar, mut);
    else if constexpr (c == convention::free_serialize_v) adl::call_free_serialize(ar, mut, class_version<T>());
    else if constexpr (c == convention::free_split) adl::call_free_save(ar, t);
    else if constexpr (c == convention::free_split_v) adl::call_free_save(ar, t, class_version<T>());
    else if constexpr (c == convention::free_minimal) save_value(ar, adl::call_free_save_minimal(std::as_const(ar), t));
    else if constexpr (c == convention::free_minimal_v)
      save_value(ar, adl::call_free_save_minimal(std::as_const(ar), t, class_version<T>()));
  }

  static void load(in_ar& ar, T& t) {
    input_archive::depth_guard guard(ar);
    constexpr convention c = on_load;
    if constexpr (c == convention::member_serialize) call_member_serialize(ar, t);
    else if constexpr (c == convention::member_serialize_v) call_member_serialize_v(ar, t, class_version<T>());
    else if constexpr (c == convention::member_split) call_member_load(ar, t);
    else if constexpr (c == convention::member_split_v) call_member_load_v(ar, t, class_version<T>());
    else if constexpr (c == convention::member_minimal || c == convention::member_minimal_v ||
                       c == convention::free_minimal || c == convention::free_minimal_v) {
      minimal value{};
      load_value(ar, value);
      if constexpr (c == convention::member_minimal) call_member_load_minimal(std::as_const(ar), t, value);
      else if constexpr (c == convention::member_minimal_v)
        call_member_load_minimal_v(std::as_const(ar), t, class_version<T>(), value);
      else if constexpr (c == convention::free_minimal) adl::call_free_load_minimal(std::as_const(ar), t, value);
      else adl::call_free_load_minimal(std::as_const(ar), t, value, class_version<T>());
    }
    else if constexpr (c == convention::free_serialize) adl::call_free_serialize(ar, t);
    else if constexpr (c == convention::free_serialize_v) adl::call_free_serialize(ar, t, class_version<T>());
    else if constexpr (c == convention::free_split) adl::call_free_load(ar, t);
    else if constexpr (c == convention::free_split_v) adl::call_free_load(ar, t, class_version<T>());
  }
};

template <>
struct codec<void> {
  static constexpr bool saveable = false, loadable = false;
  static constexpr std::size_t min_size = 0;
};

#if CPPLESS_HAS_CEREAL
// cereal's wrappers. A name is metadata for text archives: only the value travels.
template <class T>
struct codec<::cereal::NameValuePair<T>> {
  using V = std::remove_cvref_t<T>;
  static constexpr bool saveable = codec<V>::saveable;
  static constexpr bool loadable = codec<V>::loadable && !std::is_const_v<std::remove_reference_t<T>>;
  static constexpr std::size_t min_size = codec<V>::min_size;
  static void save(out_ar& ar, const ::cereal::NameValuePair<T>& nvp) { save_value(ar, static_cast<const V&>(nvp.value)); }
  static void load(in_ar& ar, ::cereal::NameValuePair<T>& nvp) { load_value(ar, nvp.value); }
};

// make_size_tag(n) in a user's container serializer: a u64 count. Each element is assumed to
// take at least one byte, so a count beyond the bytes left is refused before the user allocates.
template <class T>
struct codec<::cereal::SizeTag<T>> {
  using V = std::remove_cvref_t<T>;
  static constexpr bool saveable = std::is_integral_v<V>;
  static constexpr bool loadable = std::is_integral_v<V> && !std::is_const_v<std::remove_reference_t<T>>;
  static constexpr std::size_t min_size = 8;
  static void save(out_ar& ar, const ::cereal::SizeTag<T>& tag) {
    const std::uint64_t n = static_cast<std::uint64_t>(tag.size);
    std::memcpy(ar.grow(8), &n, 8);
  }
  static void load(in_ar& ar, ::cereal::SizeTag<T>& tag) {
    const std::size_t n = ar.read_length("cereal size tag", 1, 1);
    if (n > static_cast<std::uint64_t>(std::numeric_limits<V>::max()))
      throw_corrupt("cereal size tag", std::to_string(n) + " does not fit its integer type", ar.position());
    tag.size = static_cast<V>(n);
  }
};

template <class T>
struct codec<::cereal::BinaryData<T>> {
  static constexpr bool saveable = true;
  static constexpr bool loadable = !std::is_const_v<std::remove_pointer_t<std::remove_reference_t<T>>>;
  static constexpr std::size_t min_size = 0;
  static void save(out_ar& ar, const ::cereal::BinaryData<T>& b) { ar.write_bytes(b.data, static_cast<std::size_t>(b.size)); }
  static void load(in_ar& ar, ::cereal::BinaryData<T>& b) { ar.read_bytes(b.data, static_cast<std::size_t>(b.size)); }
};

template <class B>
struct codec<::cereal::base_class<B>> {
  static constexpr bool saveable = codec<B>::saveable, loadable = codec<B>::loadable;
  static constexpr std::size_t min_size = codec<B>::min_size;
  static void save(out_ar& ar, const ::cereal::base_class<B>& b) { codec<B>::save(ar, *b.base_ptr); }
  static void load(in_ar& ar, ::cereal::base_class<B>& b) { codec<B>::load(ar, *b.base_ptr); }
};

// A virtual base reached twice is written twice (identity is tracked for shared_ptr only).
template <class B>
struct codec<::cereal::virtual_base_class<B>> {
  static constexpr bool saveable = codec<B>::saveable, loadable = codec<B>::loadable;
  static constexpr std::size_t min_size = codec<B>::min_size;
  static void save(out_ar& ar, const ::cereal::virtual_base_class<B>& b) { codec<B>::save(ar, *b.base_ptr); }
  static void load(in_ar& ar, ::cereal::virtual_base_class<B>& b) { codec<B>::load(ar, *b.base_ptr); }
};
#endif

}  // namespace detail
}  // namespace cppless
