// cppless/shared/codec.hpp — how values are stored in Redis, and how their C++ type is named.
//
// Numbers are stored as decimal text so the server-side scripts can compare and add them
// (integers exactly: Redis' HINCRBY, and byte-wise comparisons in Lua); every other type is stored
// as the cppless archive's binary encoding. Each object records a type tag (a hash of the
// mangled type name) of its value types when it is created; every operation checks it, so a
// value is never read back as another C++ type. Queue items carry the tag themselves, because a
// blocking pop takes them without running a script.
#pragma once

#include <cppless/archive.hpp>
#include <cppless/identity.hpp>
#include <cppless/shared/errors.hpp>

#include <charconv>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <typeinfo>

namespace cppless::shared {

// Value types the server can compare and add (best<V>, map merges): integers and floating point.
template <class T>
concept numeric = (std::integral<T> && !std::same_as<T, bool>) || std::floating_point<T>;

namespace detail {

constexpr std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

using cppless::hex64;
// The "T = ..." part of a __PRETTY_FUNCTION__, i.e. the type as the compiler spells it.
std::string type_from_pretty(std::string_view pretty);

template <class T>
std::string_view pretty_function() {
  return __PRETTY_FUNCTION__;
}

// Stable across processes and builds of the same compiler ABI (Itanium mangling on Linux/macOS):
// host and workers agree even when built separately (e.g. for arm64).
template <class T>
const std::string& type_tag() {
  static const std::string tag = hex64(fnv1a(typeid(T).name()));
  return tag;
}

// For messages only, e.g. "std::vector<int>".
template <class T>
const std::string& type_name() {
  static const std::string name = type_from_pretty(pretty_function<T>());
  return name;
}

[[noreturn]] void throw_undecodable(std::string_view type, std::string_view why);

template <class T>
std::string encode(const T& value) {
  if constexpr (std::same_as<T, bool>) {
    return value ? "1" : "0";
  } else if constexpr (numeric<T>) {
    char buf[128];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);  // shortest round-trip form
    return std::string(buf, end);
  } else {
    byte_buffer bytes = cppless::to_bytes(value);
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
}

template <class T>
T decode(std::string_view text) {
  if constexpr (std::same_as<T, bool>) {
    if (text != "0" && text != "1") throw_undecodable(type_name<T>(), "not 0 or 1");
    return text == "1";
  } else if constexpr (numeric<T>) {
    T value{};
    const char* first = text.data();
    const char* last = text.data() + text.size();
    if constexpr (std::floating_point<T>) {
      // from_chars takes "inf" and "nan" but not a leading '+'; Lua writes neither with '+'.
      auto [end, ec] = std::from_chars(first, last, value);
      if (ec != std::errc{} || end != last) throw_undecodable(type_name<T>(), text);
    } else {
      auto [end, ec] = std::from_chars(first, last, value);
      if (ec != std::errc{} || end != last) throw_undecodable(type_name<T>(), text);
    }
    return value;
  } else {
    return cppless::from_bytes<T>(std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()));
  }
}

// Queue items: the 16-digit type tag, then the value.
template <class T>
std::string encode_tagged(const T& value) {
  return type_tag<T>() + encode(value);
}

template <class T>
T decode_tagged(std::string_view item, std::string_view where) {
  const std::string& tag = type_tag<T>();
  if (item.size() < tag.size() || item.substr(0, tag.size()) != tag)
    throw type_mismatch("cppless::shared: " + std::string(where) + " holds an item that is not a " + type_name<T>());
  return decode<T>(item.substr(tag.size()));
}

// 'i' (exact integers) or 'f' (doubles): how the scripts compare and add T.
template <numeric T>
constexpr const char* numeric_class() {
  return std::integral<T> ? "i" : "f";
}

}  // namespace detail
}  // namespace cppless::shared
