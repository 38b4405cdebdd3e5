// cppless/identity.hpp — how a function is named across processes and builds.
//
// The paper's patched Clang had __builtin_unique_stable_name. Here the id is built from what
// stock compilers give: __PRETTY_FUNCTION__ names a lambda by file:line:column on Clang (the
// build maps the source root away with -ffile-prefix-map, and absolute paths are cut to their
// file name), and typeid names tell apart instances of the same lambda in different template
// instantiations. The wire carries a 64-bit hash of the id string.
#pragma once

#include <cstdint>
#include <cstdlib>
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

// The 16-digit lower-case hex form of a 64-bit id (manifest, wire formats, object keys).
inline std::string hex64(std::uint64_t v) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = digits[v & 0xF];
  return s;
}

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

// A typeid name as text that reads the same under libstdc++ and libc++: demangled, without the
// standard library's inline namespaces (std::__1, std::__cxx11), the return type LLVM's
// demangler prints before a function template that encloses a local type, and spaces, and with
// the two demanglers' spellings of a lambda closure ("{lambda(int)#2}" / "'lambda0'(int)") made
// one. Ids and fingerprints use it, so a host build (libstdc++) and the Lambda function build
// (zig, libc++) agree on every function.
inline std::string portable_type_name(const char* mangled) {
  std::string text;
  {
    const std::string raw = demangle(mangled);
    for (std::size_t i = 0; i < raw.size();) {
      if (i >= 2 && raw.compare(i - 2, 2, "::") == 0) {
        if (raw.compare(i, 5, "__1::") == 0) { i += 5; continue; }
        if (raw.compare(i, 9, "__cxx11::") == 0) { i += 9; continue; }
      }
      text += raw[i++];
    }
  }
  // "void run<int>(x)::..." -> "run<int>(x)::...": a space at depth 0 before the first '('.
  int depth = 0;
  std::size_t cut = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (c == '(' && depth == 0) break;
    if (c == ' ' && depth == 0) cut = i + 1;
  }
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = cut; i < text.size();) {
    if (text.compare(i, 8, "{lambda(") == 0) {  // libstdc++: {lambda(ARGS)#K} -> 'lambda<K-2>'(ARGS)
      std::size_t parens = 0, j = i + 7;
      for (; j < text.size(); ++j) {
        parens += text[j] == '(';
        if (text[j] == ')' && --parens == 0) break;
      }
      const std::size_t hash = j + 1, close = text.find('}', hash);
      if (j < text.size() && hash < text.size() && text[hash] == '#' && close != std::string::npos) {
        const unsigned k = static_cast<unsigned>(std::strtoul(text.c_str() + hash + 1, nullptr, 10));
        out += "'lambda" + (k >= 2 ? std::to_string(k - 2) : std::string()) + "'";
        for (std::size_t c = i + 7; c <= j; ++c)
          if (text[c] != ' ') out += text[c];
        i = close + 1;
        continue;
      }
    }
    if (text[i] != ' ') out += text[i];
    ++i;
  }
  return out;
}

template <class T>
std::string type_name() {
  return readable_type_name(detail::raw_type_name<T>());
}

}  // namespace cppless
