// cppless/base64.hpp — standard base64 (RFC 4648 §4, with '=' padding) for carrying binary
// payloads inside JSON (AWS Lambda's invoke API only takes JSON).
//
// Throughput matters here (the Cppless paper lost 4.5x on it), so both directions are
// table-driven: encoding maps 12 input bits to two output characters with one lookup, decoding
// maps each character through a per-position table that already holds its bits shifted into
// place, so a 4-character group is four lookups, three ORs, one check and one 4-byte store.
//
// Decoding is strict and never trusts its input: the length must be a multiple of 4, only the
// 64 alphabet characters may appear, '=' only as one or two final characters, and the bits the
// padding leaves unused must be zero (so each byte string has exactly one encoding). No
// whitespace, no URL-safe alphabet. Violations throw cppless::decode_error naming the offset.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "cppless/byte_buffer.hpp"
#include "cppless/error.hpp"

namespace cppless {

namespace base64_detail {

inline constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// enc[x] = the two characters for the 12-bit value x (first character in the low byte).
inline constexpr std::array<std::uint16_t, 4096> encode_table = [] {
  std::array<std::uint16_t, 4096> t{};
  for (unsigned x = 0; x < 4096; ++x)
    t[x] = static_cast<std::uint16_t>(static_cast<unsigned char>(alphabet[x >> 6]) |
                                      (static_cast<unsigned char>(alphabet[x & 63]) << 8));
  return t;
}();

inline constexpr std::uint32_t bad = 0x01000000;  // above every valid 24-bit group

constexpr int value_of(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// decode_tables[i][c]: character c at position i of a group, its 6 bits already where they
// land in the 3 output bytes when the 32-bit result is stored little-endian.
inline constexpr std::array<std::array<std::uint32_t, 256>, 4> decode_tables = [] {
  std::array<std::array<std::uint32_t, 256>, 4> t{};
  for (unsigned c = 0; c < 256; ++c) {
    const int v = value_of(static_cast<unsigned char>(c));
    if (v < 0) {
      for (auto& row : t) row[c] = bad;
      continue;
    }
    const auto u = static_cast<std::uint32_t>(v);
    t[0][c] = u << 2;                                // byte 0, high 6 bits
    t[1][c] = (u >> 4) | ((u & 0x0f) << 12);         // byte 0 low 2 bits, byte 1 high 4 bits
    t[2][c] = ((u >> 2) << 8) | ((u & 0x03) << 22);  // byte 1 low 4 bits, byte 2 high 2 bits
    t[3][c] = u << 16;                               // byte 2, low 6 bits
  }
  return t;
}();

inline std::uint32_t group(const unsigned char* s) {
  return decode_tables[0][s[0]] | decode_tables[1][s[1]] | decode_tables[2][s[2]] | decode_tables[3][s[3]];
}

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_bad_char(std::string_view in, std::size_t group_start) {
  std::size_t i = group_start;
  while (i < in.size() && value_of(static_cast<unsigned char>(in[i])) >= 0) ++i;
  const auto c = static_cast<unsigned char>(in[i < in.size() ? i : in.size() - 1]);
  char hex[8];
  static constexpr char digits[] = "0123456789abcdef";
  hex[0] = '0', hex[1] = 'x', hex[2] = digits[c >> 4], hex[3] = digits[c & 15], hex[4] = 0;
  throw decode_error(std::string("invalid base64: ") + (c == '=' ? "misplaced padding '='" : "character " + std::string(hex)) +
                     " at offset " + std::to_string(i) + " of " + std::to_string(in.size()));
}

}  // namespace base64_detail

[[nodiscard]] constexpr std::size_t base64_encoded_size(std::size_t bytes) noexcept { return (bytes + 2) / 3 * 4; }

// The exact decoded size of a well-formed encoding; throws decode_error if the length is not a
// multiple of 4 (the characters themselves are checked by base64_decode).
[[nodiscard]] inline std::size_t base64_decoded_size(std::string_view in) {
  if (in.size() % 4 != 0)
    throw decode_error("invalid base64: length " + std::to_string(in.size()) + " is not a multiple of 4");
  std::size_t pad = 0;
  if (!in.empty() && in.back() == '=') pad = in[in.size() - 2] == '=' ? 2 : 1;
  return in.size() / 4 * 3 - pad;
}

// Writes base64_encoded_size(in.size()) characters to out.
inline void base64_encode(std::span<const std::byte> in, char* out) noexcept {
  using base64_detail::encode_table;
  const auto* s = reinterpret_cast<const unsigned char*>(in.data());
  std::size_t n = in.size();
  // Six input bytes per step through one 8-byte load (two bytes of it unused, hence n >= 8).
  while (n >= 8) {
    std::uint64_t x;
    std::memcpy(&x, s, 8);
    x = __builtin_bswap64(x);  // big-endian: the first byte's bits on top
    const std::uint16_t c[4] = {encode_table[(x >> 52) & 0xfff], encode_table[(x >> 40) & 0xfff],
                                encode_table[(x >> 28) & 0xfff], encode_table[(x >> 16) & 0xfff]};
    std::memcpy(out, c, 8);
    s += 6, n -= 6, out += 8;
  }
  while (n >= 3) {
    const std::uint32_t x = (std::uint32_t{s[0]} << 16) | (std::uint32_t{s[1]} << 8) | s[2];
    const std::uint16_t c[2] = {encode_table[x >> 12], encode_table[x & 0xfff]};
    std::memcpy(out, c, 4);
    s += 3, n -= 3, out += 4;
  }
  if (n != 0) {
    const std::uint32_t x = (std::uint32_t{s[0]} << 16) | (n == 2 ? std::uint32_t{s[1]} << 8 : 0);
    out[0] = base64_detail::alphabet[x >> 18];
    out[1] = base64_detail::alphabet[(x >> 12) & 63];
    out[2] = n == 2 ? base64_detail::alphabet[(x >> 6) & 63] : '=';
    out[3] = '=';
  }
}

// Appends the encoding of in to out (e.g. into a JSON document being built).
inline void base64_encode_append(std::span<const std::byte> in, std::string& out) {
  const std::size_t at = out.size();
  out.resize(at + base64_encoded_size(in.size()));
  base64_encode(in, out.data() + at);
}

[[nodiscard]] inline std::string base64_encode(std::span<const std::byte> in) {
  std::string out;
  base64_encode_append(in, out);
  return out;
}

[[nodiscard]] inline std::string base64_encode(const void* data, std::size_t size) {
  return base64_encode(std::span<const std::byte>(static_cast<const std::byte*>(data), size));
}

// Decodes in into out, which must have room for base64_decoded_size(in) bytes; returns that
// size. Throws decode_error on malformed input (out may then hold a partial result).
inline std::size_t base64_decode(std::string_view in, std::byte* out) {
  using namespace base64_detail;
  const std::size_t size = base64_decoded_size(in);
  if (in.empty()) return 0;
  const auto* s = reinterpret_cast<const unsigned char*>(in.data());
  const std::size_t groups = in.size() / 4;
  // Every group but the last: a 4-byte store of which the 4th byte is overwritten by the next
  // group (the last group is done exactly, so nothing is written past out + size).
  auto* o = reinterpret_cast<unsigned char*>(out);
  std::size_t g = 0;
  for (; g + 2 < groups; g += 2) {
    const std::uint32_t x = group(s + 4 * g);
    const std::uint32_t y = group(s + 4 * g + 4);
    if ((x | y) >= bad) [[unlikely]]
      throw_bad_char(in, 4 * g);
    std::memcpy(o + 3 * g, &x, 4);
    std::memcpy(o + 3 * g + 3, &y, 4);
  }
  for (; g + 1 < groups; ++g) {
    const std::uint32_t x = group(s + 4 * g);
    if (x >= bad) [[unlikely]]
      throw_bad_char(in, 4 * g);
    std::memcpy(o + 3 * g, &x, 4);
  }
  // The last group, with its padding.
  const unsigned char* t = s + 4 * g;
  const std::size_t pad = t[3] != '=' ? 0 : t[2] != '=' ? 1 : 2;
  const unsigned char last[4] = {t[0], t[1], pad == 2 ? static_cast<unsigned char>('A') : t[2],
                                 pad >= 1 ? static_cast<unsigned char>('A') : t[3]};
  const std::uint32_t x = group(last);
  if (x >= bad) [[unlikely]]
    throw_bad_char(in, 4 * g);
  const std::size_t tail = 3 - pad;
  // Canonical form: the bits the padding leaves unused must be zero.
  if ((pad == 1 && (x >> 16) != 0) || (pad == 2 && (x >> 8) != 0))
    throw decode_error("invalid base64: non-zero bits under the padding at offset " + std::to_string(4 * g));
  std::memcpy(o + 3 * g, &x, tail);
  return size;
}

// Appends the decoded bytes of in to out.
inline void base64_decode_append(std::string_view in, byte_buffer& out) {
  const std::size_t at = out.size();
  out.resize_uninitialized(at + base64_decoded_size(in));
  try {
    base64_decode(in, out.data() + at);
  } catch (...) {
    out.resize_uninitialized(at);
    throw;
  }
}

[[nodiscard]] inline byte_buffer base64_decode(std::string_view in) {
  byte_buffer out;
  base64_decode_append(in, out);
  return out;
}

}  // namespace cppless
