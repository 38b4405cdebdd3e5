#include <cppless/base64.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

using cppless::base64_decode;
using cppless::base64_encode;
using cppless::decode_error;

namespace {

// A deliberately simple reference encoder, bit by bit.
std::string reference_encode(const std::vector<std::byte>& in) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (std::byte b : in) {
    buffer = (buffer << 8) | static_cast<unsigned>(b);
    bits += 8;
    while (bits >= 6) out += alphabet[(buffer >> (bits - 6)) & 63], bits -= 6;
  }
  if (bits > 0) out += alphabet[(buffer << (6 - bits)) & 63];
  while (out.size() % 4 != 0) out += '=';
  return out;
}

std::vector<std::byte> to_vector(const cppless::byte_buffer& b) { return {b.begin(), b.end()}; }

std::string encode_text(std::string_view s) { return base64_encode(s.data(), s.size()); }

std::string decode_text(std::string_view s) {
  const auto b = base64_decode(s);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

}  // namespace

TEST(Base64, Rfc4648Vectors) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (auto [plain, encoded] : vectors) {
    EXPECT_EQ(encode_text(plain), encoded);
    EXPECT_EQ(decode_text(encoded), plain);
  }
}

TEST(Base64, RoundTripsOfEveryLengthUpTo300) {
  std::mt19937 rng(7);
  for (std::size_t n = 0; n <= 300; ++n) {
    for (int variant = 0; variant < 3; ++variant) {
      std::vector<std::byte> data(n);
      for (auto& b : data)
        b = static_cast<std::byte>(variant == 0 ? rng() : variant == 1 ? 0xff : 0x00);
      const std::string text = base64_encode(data);
      ASSERT_EQ(text.size(), cppless::base64_encoded_size(n));
      ASSERT_EQ(text, reference_encode(data)) << n;
      ASSERT_EQ(cppless::base64_decoded_size(text), n);
      ASSERT_EQ(to_vector(base64_decode(text)), data) << n;
    }
  }
}

TEST(Base64, EveryByteValueSurvives) {
  std::vector<std::byte> all(256);
  for (int i = 0; i < 256; ++i) all[static_cast<std::size_t>(i)] = static_cast<std::byte>(i);
  EXPECT_EQ(to_vector(base64_decode(base64_encode(all))), all);
}

TEST(Base64, AppendVariants) {
  std::string json = "{\"payload\":\"";
  const std::string_view data = "hello";
  cppless::base64_encode_append(std::as_bytes(std::span(data.data(), data.size())), json);
  json += "\"}";
  EXPECT_EQ(json, "{\"payload\":\"aGVsbG8=\"}");

  cppless::byte_buffer out;
  out.append("x", 1);
  cppless::base64_decode_append("aGVsbG8=", out);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(out.data()), out.size()), "xhello");
  EXPECT_THROW(cppless::base64_decode_append("aGVsb!8=", out), decode_error);
  EXPECT_EQ(out.size(), 6u);  // a failed append leaves the buffer as it was
}

TEST(Base64, RejectsBadLengths) {
  for (const char* bad : {"A", "AB", "ABC", "ABCDE", "Zm9vY", "Zm9vYmF"}) EXPECT_THROW((void)base64_decode(bad), decode_error) << bad;
  try {
    (void)base64_decode("ABCDE");
    FAIL();
  } catch (const decode_error& e) {
    EXPECT_STREQ(e.what(), "invalid base64: length 5 is not a multiple of 4");
  }
}

TEST(Base64, RejectsInvalidCharactersAnywhere) {
  const std::string good = encode_text("the quick brown fox jumps over the lazy dog, twice over!!!!!");  // no padding
  ASSERT_EQ(good.find('='), std::string::npos);
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (char c : {'!', ' ', '\n', '-', '_', '.', '\0', '\x80', '\xff', '='}) {
      if (c == '=' && i + 1 == good.size()) continue;  // may be valid padding: see the padding tests
      std::string bad = good;
      bad[i] = c;
      try {
        (void)base64_decode(bad);
        ADD_FAILURE() << "accepted " << static_cast<int>(c) << " at " << i;
      } catch (const decode_error& e) {
        EXPECT_NE(std::string(e.what()).find("at offset " + std::to_string(i)), std::string::npos) << e.what();
      }
    }
  }
}

TEST(Base64, RejectsMisplacedPadding) {
  for (const char* bad : {"====", "A===", "AB=C", "Zg==Zg==", "=AAA", "AA=A", "Zm9v=AAA"})
    EXPECT_THROW((void)base64_decode(bad), decode_error) << bad;
}

TEST(Base64, RejectsNonCanonicalPaddingBits) {
  EXPECT_EQ(decode_text("Zg=="), "f");
  EXPECT_THROW((void)base64_decode("Zh=="), decode_error);  // same byte, stray low bits
  EXPECT_EQ(decode_text("Zm8="), "fo");
  EXPECT_THROW((void)base64_decode("Zm9="), decode_error);
}

TEST(Base64, LargeInputs) {
  std::mt19937 rng(3);
  std::vector<std::byte> data(1 << 20);
  for (auto& b : data) b = static_cast<std::byte>(rng());
  const std::string text = base64_encode(data);
  EXPECT_EQ(text, reference_encode(data));
  EXPECT_EQ(to_vector(base64_decode(text)), data);
}
