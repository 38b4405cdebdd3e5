// SHA-1 (FIPS 180-4), straightforward: scripts are hashed once per process.
#include "sha1.hpp"

#include <array>
#include <cstdint>

namespace cppless::shared::detail {
namespace {

std::uint32_t rotl(std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

void block(std::array<std::uint32_t, 5>& h, const unsigned char* p) {
  std::uint32_t w[80];
  for (int i = 0; i < 16; ++i)
    w[i] = (std::uint32_t{p[4 * i]} << 24) | (std::uint32_t{p[4 * i + 1]} << 16) | (std::uint32_t{p[4 * i + 2]} << 8) |
           std::uint32_t{p[4 * i + 3]};
  for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    std::uint32_t f, k;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6;
    }
    std::uint32_t t = rotl(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = t;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

std::string sha1_hex(std::string_view data) {
  std::array<std::uint32_t, 5> h = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t n = data.size();
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) block(h, p + i);
  // Padding: 0x80, zeros, then the bit length (big-endian) in the last 8 bytes.
  unsigned char tail[128] = {};
  std::size_t rest = n - i;
  for (std::size_t j = 0; j < rest; ++j) tail[j] = p[i + j];
  tail[rest] = 0x80;
  std::size_t len = rest + 1 + 8 <= 64 ? 64 : 128;
  std::uint64_t bits = static_cast<std::uint64_t>(n) * 8;
  for (int j = 0; j < 8; ++j) tail[len - 1 - j] = static_cast<unsigned char>(bits >> (8 * j));
  block(h, tail);
  if (len == 128) block(h, tail + 64);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(40);
  for (std::uint32_t v : h)
    for (int j = 28; j >= 0; j -= 4) out += hex[(v >> j) & 0xF];
  return out;
}

}  // namespace cppless::shared::detail
