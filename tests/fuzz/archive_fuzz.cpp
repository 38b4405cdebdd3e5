// libFuzzer target for the archive and base64 decoders.
//
// The first input byte picks a type; the rest is decoded as that type. Decoding may fail only
// with cppless::decode_error. When it succeeds the value is encoded again and must give back
// exactly the consumed bytes (the format is canonical: flags, bools, padding bits and the order
// of ordered containers are all checked on decode), or, for unordered containers whose iteration
// order is not canonical, an equal value. ASan/UBSan catch the rest (overflows, huge allocations
// through -rss_limit_mb / -malloc_limit_mb).
//
// Built twice from this file: the fuzzer itself, and (with CPPLESS_FUZZ_SEED_MAIN) a small
// program that writes a seed corpus of valid encodings for the current wire format.
#include <cppless/archive.hpp>
#include <cppless/base64.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

namespace {

struct record {
  int id = 0;
  std::string name;
  std::vector<double> samples;
  std::optional<std::map<int, std::string>> tags;
  std::array<std::uint8_t, 3> rgb{};
  bool active = false;
  template <class A>
  void serialize(A& ar) {
    ar(id, name, samples, tags, rgb, active);
  }
};

struct node {
  std::int16_t value = 0;
  std::vector<node> children;
  std::unique_ptr<node> next;
  template <class A>
  void serialize(A& ar) {
    ar(value, children, next);
  }
};

// Polymorphic classes behind base pointers, and shared_ptr identity (back references).
struct shape {
  virtual ~shape() = default;
  std::int8_t kind = 0;
  template <class A>
  void serialize(A& ar) {
    ar(kind);
  }
};
struct disc : shape {
  float r = 0;
  template <class A>
  void serialize(A& ar) {
    shape::serialize(ar);
    ar(r);
  }
};
struct chain_link {
  std::shared_ptr<shape> look;
  std::shared_ptr<chain_link> next;
  template <class A>
  void serialize(A& ar) {
    ar(look, next);
  }
};
using pointers_type = std::tuple<std::vector<std::shared_ptr<shape>>, std::unique_ptr<shape>, std::shared_ptr<chain_link>>;

using map_type = std::map<std::string, std::vector<std::optional<int>>>;
using variant_type = std::variant<std::monostate, std::int64_t, std::string, std::vector<bool>, std::pair<float, std::list<std::string>>>;
using mixed_type = std::tuple<std::set<std::uint16_t>, std::multimap<std::int8_t, std::string>, std::deque<std::u16string>,
                              std::shared_ptr<std::vector<char>>, std::bitset<11>, std::chrono::milliseconds>;
// Elements that encode to nothing: counts must not multiply into memory.
using empties_type = std::vector<std::pair<std::vector<std::monostate>, std::list<std::tuple<>>>>;
using unordered_type = std::tuple<std::unordered_map<std::string, std::vector<int>>, std::unordered_multiset<std::int32_t>>;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "archive_fuzz: %s\n", what);
  std::abort();
}

// Canonical types: decode, re-encode, compare bytes.
template <class T>
void exact_round_trip(std::span<const std::byte> in) {
  T value;
  std::size_t consumed = 0;
  try {
    cppless::input_archive ar(in);
    ar(value);
    consumed = ar.position();
  } catch (const cppless::decode_error&) {
    return;
  }
  const cppless::byte_buffer again = cppless::to_bytes(value);
  if (again.size() != consumed || (consumed != 0 && std::memcmp(again.data(), in.data(), consumed) != 0))
    fail("re-encoding a decoded value did not give back the input bytes");
}

// Unordered containers: compare values instead.
template <class T>
void value_round_trip(std::span<const std::byte> in) {
  T value;
  try {
    value = cppless::from_bytes<T>(in);
  } catch (const cppless::decode_error&) {
    return;
  }
  const cppless::byte_buffer again = cppless::to_bytes(value);
  if (cppless::from_bytes<T>(again.span()) != value) fail("unordered value changed in a round trip");
}

[[maybe_unused]] void base64_round_trip(std::span<const std::byte> in) {
  const std::string_view text(reinterpret_cast<const char*>(in.data()), in.size());
  try {
    const cppless::byte_buffer decoded = cppless::base64_decode(text);
    if (cppless::base64_encode(decoded.span()) != text) fail("base64: decoding accepted a non-canonical text");
  } catch (const cppless::decode_error&) {
  }
  // And any bytes encode and decode back.
  const std::string encoded = cppless::base64_encode(in);
  const cppless::byte_buffer back = cppless::base64_decode(encoded);
  if (back.size() != in.size() || (!in.empty() && std::memcmp(back.data(), in.data(), in.size()) != 0))
    fail("base64: bytes changed in a round trip");
}

// Several values read one after another from the same archive, as a call payload is.
[[maybe_unused]] void sequence(std::span<const std::byte> in) {
  std::uint32_t a = 0;
  std::string b;
  std::vector<std::uint64_t> c;
  std::optional<record> d;
  try {
    cppless::input_archive ar(in);
    ar(a, b, c, d);
    const std::size_t consumed = ar.position();
    const cppless::byte_buffer again = cppless::to_bytes(a, b, c, d);
    if (again.size() != consumed || (consumed != 0 && std::memcmp(again.data(), in.data(), consumed) != 0))
      fail("sequence: re-encoding did not give back the input bytes");
  } catch (const cppless::decode_error&) {
  }
}

}  // namespace

CPPLESS_REGISTER_TYPE(disc);

#ifndef CPPLESS_FUZZ_SEED_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
  switch (data[0] % 10) {
    case 0: exact_round_trip<map_type>(in); break;
    case 1: exact_round_trip<variant_type>(in); break;
    case 2: exact_round_trip<std::vector<record>>(in); break;
    case 3: exact_round_trip<node>(in); break;
    case 4: exact_round_trip<mixed_type>(in); break;
    case 5: value_round_trip<unordered_type>(in); break;
    case 6: base64_round_trip(in); break;
    case 7: sequence(in); break;
    case 8: exact_round_trip<empties_type>(in); break;
    case 9: exact_round_trip<pointers_type>(in); break;
  }
  return 0;
}

#else  // the seed corpus writer

#include <filesystem>
#include <fstream>

namespace {

int seed_count = 0;

void write_seed(const std::filesystem::path& dir, std::uint8_t selector, std::span<const std::byte> bytes) {
  std::ofstream out(dir / ("seed_" + std::to_string(seed_count++)), std::ios::binary);
  out.put(static_cast<char>(selector));
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

template <class... T>
void seed(const std::filesystem::path& dir, std::uint8_t selector, const T&... values) {
  write_seed(dir, selector, cppless::to_bytes(values...).span());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus directory>\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);

  seed(dir, 0, map_type{});
  seed(dir, 0, map_type{{"alpha", {1, std::nullopt, 3}}, {"beta", {}}, {"gamma", {std::nullopt, -7}}});
  for (const variant_type& v : {variant_type{}, variant_type{std::int64_t{-5}}, variant_type{std::string("text")},
                                variant_type{std::vector<bool>{true, false, true}},
                                variant_type{std::pair<float, std::list<std::string>>{1.5f, {"a", "bc"}}}})
    seed(dir, 1, v);
  std::vector<record> records(2);
  records[0].id = 42;
  records[0].name = "answer";
  records[0].samples = {0.5, -1.25};
  records[0].tags = std::map<int, std::string>{{1, "one"}, {2, "two"}};
  records[0].rgb = {255, 128, 0};
  records[0].active = true;
  seed(dir, 2, records);
  node tree;
  tree.value = 1;
  tree.children.resize(2);
  tree.children[0].next = std::make_unique<node>();
  tree.next = std::make_unique<node>();
  seed(dir, 3, tree);
  mixed_type mixed{{1, 2, 300}, {{-1, "m"}, {-1, "n"}, {5, ""}}, {u"x", u"yz"},
                   std::make_shared<std::vector<char>>(std::vector<char>{'q'}), std::bitset<11>(0x5a5),
                   std::chrono::milliseconds(1234)};
  seed(dir, 4, mixed);
  unordered_type unordered{{{"k", {1, 2}}, {"l", {}}}, {3, 3, 4}};
  seed(dir, 5, unordered);
  const std::string b64 = cppless::base64_encode(cppless::to_bytes(records).span());
  write_seed(dir, 6, std::as_bytes(std::span(b64.data(), b64.size())));
  write_seed(dir, 6, std::as_bytes(std::span("Zm9vYg==", 8)));
  seed(dir, 7, std::uint32_t{7}, std::string("call"), std::vector<std::uint64_t>{1, 2, 3}, std::optional<record>(records[0]));
  seed(dir, 8, empties_type{{std::vector<std::monostate>(3), std::list<std::tuple<>>(2)}, {}});
  auto d = std::make_shared<disc>();
  d->r = 2.5f;
  auto chain = std::make_shared<chain_link>(chain_link{d, std::make_shared<chain_link>(chain_link{d, nullptr})});
  pointers_type pointers;
  std::get<0>(pointers) = {d, std::make_shared<shape>(), d, nullptr};
  std::get<1>(pointers) = std::make_unique<disc>();
  std::get<2>(pointers) = chain;
  seed(dir, 9, pointers);
  std::printf("wrote %d seeds to %s\n", seed_count, dir.c_str());
  return 0;
}

#endif
