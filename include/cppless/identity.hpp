// cppless/identity.hpp — how a function is named across processes and builds.
//
// The paper's patched Clang had __builtin_unique_stable_name. Here the id is built from what
// stock compilers give: __PRETTY_FUNCTION__ names a lambda by file:line:column on Clang (the
// build maps the source root away with -ffile-prefix-map, and absolute paths are cut to their
// file name), and typeid names tell apart instances of the same lambda in different template
// instantiations. The wire carries a 64-bit hash of the id string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <typeinfo>

namespace cppless {

namespace detail {
template <class T>
constexpr std::string_view raw_type_name() {
  return __PRETTY_FUNCTION__;
}
}  // namespace detail

// 64-bit FNV-1a followed by a final avalanche mix: stable, platform independent.
constexpr std::uint64_t hash64(std::string_view text, std::uint64_t seed = 0xcbf29ce484222325ull) {
  std::uint64_t h = seed;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

// Readable name of T from the compiler (e.g. "(lambda at examples/pi/main.cpp:12:13)"),
// with absolute directories cut off so the name does not depend on where the build lives.
std::string readable_type_name(std::string_view pretty_function);

// Demangled name of a typeid, or the mangled name if demangling fails.
std::string demangle(const char* mangled);

template <class T>
std::string type_name() {
  return readable_type_name(detail::raw_type_name<T>());
}

}  // namespace cppless
