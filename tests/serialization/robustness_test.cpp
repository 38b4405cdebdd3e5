// Decoding never trusts its input: truncated, corrupt or hostile payloads end in
// cppless::decode_error, never in a crash, a hang or a huge allocation.
#include "test_util.hpp"

#include <array>
#include <bitset>
#include <deque>
#include <forward_list>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <valarray>
#include <variant>
#include <vector>

using cppless::byte_buffer;
using cppless::decode_error;
using cppless::from_bytes;
using cppless::to_bytes;
using cppless_test::allocation_log;
using cppless_test::counting_allocator;
using cppless_test::put;

namespace {

struct record {
  int id = 0;
  std::string name;
  std::vector<std::optional<double>> samples;
  std::map<std::string, std::variant<int, std::string>> tags;
  std::unique_ptr<record> next;
  template <class A>
  void serialize(A& ar) {
    ar(id, name, samples, tags, next);
  }
};

struct empty {
  template <class A>
  void serialize(A&) {}
  bool operator<(const empty&) const { return false; }
};

using nested = std::tuple<std::map<std::string, std::vector<std::optional<int>>>, std::vector<record>,
                          std::variant<std::monostate, std::string, std::vector<bool>>, std::set<int>,
                          std::unordered_map<int, std::string>, std::array<std::uint16_t, 3>,
                          std::deque<std::list<std::string>>, std::shared_ptr<std::string>, bool>;

nested sample() {
  nested v;
  std::get<0>(v) = {{"alpha", {1, std::nullopt, 3}}, {"beta", {}}, {"gamma", {std::nullopt}}};
  auto& records = std::get<1>(v);
  records.resize(2);
  records[0].id = 7;
  records[0].name = "first";
  records[0].samples = {1.5, std::nullopt};
  records[0].tags = {{"k", 1}, {"l", std::string("v")}};
  records[0].next = std::make_unique<record>();
  records[0].next->name = "inner";
  records[1].samples = {std::nullopt};
  std::get<2>(v) = std::vector<bool>{true, false, true, true, false, false, true, false, true};
  std::get<3>(v) = {3, 1, 4};
  std::get<4>(v) = {{1, "one"}, {2, "two"}};
  std::get<5>(v) = {1, 2, 3};
  std::get<6>(v) = {{"x", "yy"}, {}};
  std::get<7>(v) = std::make_shared<std::string>("shared");
  std::get<8>(v) = true;
  return v;
}

template <class T>
void expect_decode_error(std::span<const std::byte> payload, const std::string& message_part = "") {
  try {
    (void)from_bytes<T>(payload);
    ADD_FAILURE() << "decoded without error";
  } catch (const decode_error& e) {
    if (!message_part.empty()) {
      EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos) << e.what();
    }
  }
}

std::vector<std::byte> length_only(std::uint64_t n, std::size_t extra_bytes = 0) {
  std::vector<std::byte> p;
  put(p, n);
  p.resize(p.size() + extra_bytes, std::byte{0});
  return p;
}

}  // namespace

TEST(Robustness, TheSampleRoundTrips) {
  const byte_buffer b = to_bytes(sample());
  const nested back = from_bytes<nested>(b.span());
  const nested original = sample();
  EXPECT_EQ(std::get<0>(back), std::get<0>(original));
  EXPECT_EQ(std::get<1>(back)[0].next->name, "inner");
  EXPECT_EQ(std::get<2>(back), std::get<2>(original));
  EXPECT_EQ(std::get<4>(back), std::get<4>(original));  // unordered: equal content, maybe not equal bytes
  EXPECT_EQ(std::get<6>(back), std::get<6>(original));
  EXPECT_EQ(*std::get<7>(back), "shared");
}

TEST(Robustness, EveryTruncatedPrefixThrowsDecodeError) {
  const byte_buffer b = to_bytes(sample());
  ASSERT_GT(b.size(), 200u);
  for (std::size_t n = 0; n < b.size(); ++n) {
    EXPECT_THROW((void)from_bytes<nested>(b.span().first(n)), decode_error) << "prefix of " << n << " bytes";
  }
}

TEST(Robustness, FlippedBytesNeverCrash) {
  const byte_buffer original = to_bytes(sample());
  std::vector<std::byte> bytes(original.begin(), original.end());
  std::size_t decoded = 0, rejected = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned mask : {0x01u, 0x02u, 0x10u, 0x80u, 0xffu, 0x7fu}) {
      bytes[i] ^= static_cast<std::byte>(mask);
      try {
        const nested v = from_bytes<nested>(bytes);
        // Whatever decoded is a valid value: it encodes again, and that decodes.
        const byte_buffer again = to_bytes(v);
        EXPECT_NO_THROW((void)from_bytes<nested>(again.span()));
        ++decoded;
      } catch (const decode_error&) {
        ++rejected;
      }
      bytes[i] ^= static_cast<std::byte>(mask);
    }
  }
  EXPECT_GT(rejected, 0u);
  EXPECT_GT(decoded, 0u);  // flipping a character inside a string is still a valid payload
}

TEST(Robustness, RandomBytesNeverCrash) {
  std::mt19937 rng(1);
  for (int round = 0; round < 20000; ++round) {
    std::vector<std::byte> bytes(rng() % 64);
    for (auto& b : bytes) b = static_cast<std::byte>(rng() % 4 == 0 ? rng() : rng() % 3);  // many small lengths
    try {
      (void)from_bytes<nested>(bytes);
    } catch (const decode_error&) {
    }
    try {
      (void)from_bytes<std::vector<record>>(bytes);
    } catch (const decode_error&) {
    }
  }
}

TEST(Robustness, HugeLengthsThrowBeforeAllocating) {
  for (std::uint64_t n : {std::uint64_t{1} << 60, std::uint64_t{1} << 62, ~std::uint64_t{0}, std::uint64_t{13}}) {
    const auto p = length_only(n, 12);
    expect_decode_error<std::string>(p, "std::string length");
    expect_decode_error<std::u32string>(p);
    expect_decode_error<std::vector<std::uint32_t>>(p, "std::vector length");  // n * 4 may overflow: checked as n <= left / 4
    expect_decode_error<std::vector<double>>(p);
    expect_decode_error<std::vector<std::string>>(p, "at least 8 bytes each");
    expect_decode_error<std::vector<record>>(p);
    expect_decode_error<std::vector<bool>>(p);
    expect_decode_error<std::map<int, int>>(p);
    expect_decode_error<std::multimap<std::string, std::string>>(p);
    expect_decode_error<std::unordered_map<int, std::vector<int>>>(p);
    expect_decode_error<std::set<std::string>>(p);
    expect_decode_error<std::unordered_set<std::uint64_t>>(p);
    expect_decode_error<std::list<int>>(p);
    expect_decode_error<std::forward_list<std::string>>(p);
    expect_decode_error<std::deque<std::optional<int>>>(p);
    expect_decode_error<std::valarray<float>>(p);
    expect_decode_error<std::valarray<std::string>>(p);
  }
}

TEST(Robustness, HugeLengthsDoNotReachTheAllocator) {
  allocation_log::reset();
  const auto p = length_only(std::uint64_t{1} << 60, 12);
  expect_decode_error<std::vector<int, counting_allocator<int>>>(p);
  expect_decode_error<std::basic_string<char, std::char_traits<char>, counting_allocator<char>>>(p);
  expect_decode_error<std::vector<std::string, counting_allocator<std::string>>>(p);
  expect_decode_error<std::vector<record, counting_allocator<record>>>(p);
  expect_decode_error<std::vector<empty, counting_allocator<empty>>>(p);
  EXPECT_LT(allocation_log::largest, 4096u);
}

TEST(Robustness, ElementsThatMayBeEmptyAreBoundedToo) {
  // A vector of empty elements is legitimately just a count...
  EXPECT_EQ(from_bytes<std::vector<std::monostate>>(length_only(1000)).size(), 1000u);
  EXPECT_EQ(from_bytes<std::vector<empty>>(length_only(1000)).size(), 1000u);
  // ...but a count that would need gigabytes of memory without any bytes behind it is refused.
  expect_decode_error<std::vector<std::monostate>>(length_only(std::uint64_t{1} << 40));
  expect_decode_error<std::vector<empty>>(length_only(std::uint64_t{1} << 40));
  expect_decode_error<std::vector<std::array<empty, 0>>>(length_only(std::uint64_t{1} << 40));
}

TEST(Robustness, NestedCountsOfEmptyElementsCannotMultiply) {
  // 1000 inner vectors of 2^20 empty elements each: 8 KB of payload that would need 1 GB of
  // elements. The archive's budget for elements that encode to nothing (16 MiB) stops it.
  std::vector<std::byte> p;
  put(p, std::uint64_t{1000});
  for (int i = 0; i < 1000; ++i) put(p, std::uint64_t{1} << 20);
  allocation_log::reset();
  expect_decode_error<std::vector<std::vector<empty, counting_allocator<empty>>>>(p, "encode to nothing");
  expect_decode_error<std::vector<std::list<std::monostate>>>(p, "encode to nothing");
  expect_decode_error<std::vector<std::multiset<empty>>>(p, "encode to nothing");
  EXPECT_LT(allocation_log::total, std::size_t{64} << 20);
}

TEST(Robustness, TheMessageNamesTypeAndSizes) {
  auto p = length_only(4000000);
  p.resize(8 + 12);
  try {
    (void)from_bytes<std::string>(p);
    FAIL();
  } catch (const decode_error& e) {
    EXPECT_STREQ(e.what(), "truncated payload: std::string length 4000000 exceeds the 12 bytes left (at byte 8)");
  }
  expect_decode_error<std::uint32_t>(std::vector<std::byte>(3), "uint32 needs 4 bytes but only 3 are left");
}

TEST(Robustness, TrailingBytesAreRefused) {
  byte_buffer b = to_bytes(std::string("abc"));
  b.append("x", 1);
  expect_decode_error<std::string>(b.span(), "1 trailing bytes");
  std::string s;
  EXPECT_THROW(from_bytes(b.span(), s), decode_error);
}

TEST(Robustness, OutOfRangeFlagsAndIndexes) {
  const std::vector<std::byte> two = {std::byte{2}};
  expect_decode_error<bool>(two, "bool byte is 2");
  expect_decode_error<std::optional<int>>(two, "std::optional flag is 2");
  expect_decode_error<std::unique_ptr<int>>(two, "std::unique_ptr flag");
  expect_decode_error<std::shared_ptr<int>>(std::vector<std::byte>{std::byte{0xff}}, "std::shared_ptr flag");
  expect_decode_error<std::array<bool, 2>>(std::vector<std::byte>{std::byte{1}, std::byte{7}});

  using V = std::variant<int, std::string, std::monostate>;
  for (std::uint32_t index : {3u, 4u, 0xffffffffu}) {
    std::vector<std::byte> p;
    put(p, index);
    put(p, std::uint32_t{0});
    expect_decode_error<V>(p, "std::variant index " + std::to_string(index) + " is out of range (3 alternatives)");
  }
}

TEST(Robustness, OrderedKeysMustArriveInOrderAndOnce) {
  auto map_payload = [](std::vector<int> keys) {
    std::vector<std::byte> p;
    put(p, static_cast<std::uint64_t>(keys.size()));
    for (int k : keys) put(p, k), put(p, std::int32_t{0});
    return p;
  };
  const auto in_order = from_bytes<std::map<int, int>>(map_payload({1, 2, 3}));
  EXPECT_EQ(in_order.size(), 3u);
  expect_decode_error<std::map<int, int>>(map_payload({2, 1}), "not strictly increasing");
  expect_decode_error<std::map<int, int>>(map_payload({1, 1}), "not strictly increasing");
  const auto repeated = from_bytes<std::multimap<int, int>>(map_payload({1, 1, 2}));
  EXPECT_EQ(repeated.size(), 3u);
  expect_decode_error<std::multimap<int, int>>(map_payload({2, 1}), "out of order");
  expect_decode_error<std::unordered_map<int, int>>(map_payload({5, 6, 5}), "repeated key");
  const auto unordered_repeated = from_bytes<std::unordered_multimap<int, int>>(map_payload({5, 5}));
  EXPECT_EQ(unordered_repeated.size(), 2u);

  auto set_payload = [](std::vector<int> keys) {
    std::vector<std::byte> p;
    put(p, static_cast<std::uint64_t>(keys.size()));
    for (int k : keys) put(p, k);
    return p;
  };
  expect_decode_error<std::set<int>>(set_payload({1, 1}));
  expect_decode_error<std::set<int>>(set_payload({3, 2}));
  expect_decode_error<std::unordered_set<int>>(set_payload({4, 4}));
  EXPECT_EQ(from_bytes<std::multiset<int>>(set_payload({4, 4})).size(), 2u);
}

TEST(Robustness, UnusedBitsMustBeZero) {
  std::vector<std::byte> p;
  put(p, std::uint64_t{3});
  p.push_back(std::byte{0x0f});  // bit 3 set, past a length of 3 bits
  expect_decode_error<std::vector<bool>>(p, "bits set past its length");
  p.back() = std::byte{0x07};
  EXPECT_EQ(from_bytes<std::vector<bool>>(p), (std::vector<bool>{true, true, true}));
  expect_decode_error<std::bitset<4>>(std::vector<std::byte>{std::byte{0x10}}, "bits set past its size");
}

namespace {
struct chain {
  int value = 0;
  std::unique_ptr<chain> next;
  template <class A>
  void serialize(A& ar) {
    ar(value, next);
  }
};

std::vector<std::byte> chain_payload(std::size_t depth) {
  std::vector<std::byte> p;
  for (std::size_t i = 0; i < depth; ++i) {
    put(p, static_cast<std::int32_t>(i));
    p.push_back(i + 1 < depth ? std::byte{1} : std::byte{0});
  }
  return p;
}

// Destroys a long chain iteratively (the default destructor would recurse once per link).
void unlink(chain& c) {
  std::unique_ptr<chain> next = std::move(c.next);
  while (next) next = std::move(next->next);
}
}  // namespace

TEST(Robustness, DeepNestingIsRefusedInsteadOfOverflowingTheStack) {
  chain ok = from_bytes<chain>(chain_payload(cppless::input_archive::default_max_depth));
  unlink(ok);
  expect_decode_error<chain>(chain_payload(cppless::input_archive::default_max_depth + 1), "deeper than max_depth");
  expect_decode_error<chain>(chain_payload(1'000'000), "deeper than max_depth");

  // The limit is per archive and can be raised for legitimately deep data.
  const auto deep = chain_payload(2000);
  cppless::input_archive ar(deep.data(), deep.size());
  ar.set_max_depth(2000);
  chain c;
  ar(c);
  ar.expect_end();
  unlink(c);
}

TEST(Robustness, EmptyInput) {
  expect_decode_error<int>({}, "needs 4 bytes but only 0");
  EXPECT_EQ(from_bytes<std::tuple<>>({}), std::tuple<>{});
  cppless::input_archive ar(nullptr, 0);
  EXPECT_EQ(ar.remaining(), 0u);
  ar.expect_end();
}
