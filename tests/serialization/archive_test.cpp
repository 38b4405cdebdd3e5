// Round trips of every supported standard type, nested combinations, and the wire format.
#include "test_util.hpp"

#include <array>
#include <atomic>
#include <bitset>
#include <chrono>
#include <complex>
#include <cstdint>
#include <deque>
#include <forward_list>
#include <functional>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <span>
#include <stack>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <valarray>
#include <variant>
#include <vector>

using cppless::byte_buffer;
using cppless::from_bytes;
using cppless::input_archive;
using cppless::is_serializable_v;
using cppless::output_archive;
using cppless::to_bytes;
using cppless_test::round_trip;

namespace {

enum class color : std::uint8_t { red = 1, green = 2, blue = 200 };
enum plain { plain_a, plain_b = 7 };
enum class flag : bool { off, on };

struct point {
  double x = 0, y = 0;
  template <class A>
  void serialize(A& ar) {
    ar(x, y);
  }
  bool operator==(const point&) const = default;
  bool operator<(const point& o) const { return std::tie(x, y) < std::tie(o.x, o.y); }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// is_serializable_v

static_assert(is_serializable_v<int> && is_serializable_v<bool> && is_serializable_v<double> &&
              is_serializable_v<long double> && is_serializable_v<char32_t> && is_serializable_v<std::byte>);
static_assert(is_serializable_v<const int> && is_serializable_v<const std::string>);  // a const capture
static_assert(is_serializable_v<color> && is_serializable_v<plain> && is_serializable_v<flag>);
static_assert(is_serializable_v<std::string> && is_serializable_v<std::wstring> && is_serializable_v<std::u8string>);
static_assert(is_serializable_v<std::vector<int>> && is_serializable_v<std::vector<bool>>);
static_assert(is_serializable_v<std::map<std::string, std::vector<int>>>);
static_assert(is_serializable_v<std::array<point, 3>> && is_serializable_v<int[4]> && is_serializable_v<int[2][3]>);
static_assert(is_serializable_v<std::pair<int, std::string>> && is_serializable_v<std::tuple<>> &&
              is_serializable_v<std::tuple<int, std::optional<std::string>>>);
static_assert(is_serializable_v<std::multimap<int, int>> && is_serializable_v<std::unordered_map<std::string, point>>);
static_assert(is_serializable_v<std::set<int>> && is_serializable_v<std::unordered_set<int>>);
static_assert(is_serializable_v<std::list<int>> && is_serializable_v<std::deque<std::string>>);
static_assert(is_serializable_v<std::optional<point>> && is_serializable_v<std::variant<std::monostate, int, std::string>>);
static_assert(is_serializable_v<std::unique_ptr<point>> && is_serializable_v<std::shared_ptr<const std::string>>);
static_assert(is_serializable_v<std::chrono::milliseconds> && is_serializable_v<std::complex<float>>);
static_assert(is_serializable_v<point>);

static_assert(!is_serializable_v<int*> && !is_serializable_v<const char*> && !is_serializable_v<void*>);
static_assert(!is_serializable_v<void (*)()> && !is_serializable_v<void()> && !is_serializable_v<int point::*>);
static_assert(!is_serializable_v<int&> && !is_serializable_v<const std::string&> && !is_serializable_v<int&&>);
static_assert(!is_serializable_v<std::string_view> && !is_serializable_v<std::span<int>>);
static_assert(!is_serializable_v<std::function<int()>> && !is_serializable_v<std::thread> && !is_serializable_v<std::mutex>);
static_assert(!is_serializable_v<std::vector<std::mutex>> && !is_serializable_v<std::map<int, std::string_view>>);
static_assert(!is_serializable_v<std::optional<int*>> && !is_serializable_v<std::pair<int, std::span<int>>>);
static_assert(!is_serializable_v<std::variant<int, std::function<void()>>>);
static_assert(!is_serializable_v<std::unique_ptr<int[]>> && !is_serializable_v<std::weak_ptr<int>>);
static_assert(!is_serializable_v<std::unique_ptr<int, void (*)(int*)>>);
static_assert(!is_serializable_v<void> && !is_serializable_v<std::nullptr_t> && !is_serializable_v<int[]>);
static_assert(!is_serializable_v<std::tuple<int, int*>>);

namespace {
struct no_serialize {
  int x;
};
struct no_default {
  explicit no_default(int v) : x(v) {}
  int x;
  template <class A>
  void serialize(A& ar) {
    ar(x);
  }
};
}  // namespace
static_assert(!is_serializable_v<no_serialize> && !is_serializable_v<std::vector<no_serialize>>);
// Loadable in place, but a container must default-construct its elements first.
static_assert(is_serializable_v<no_default> && !is_serializable_v<std::vector<no_default>> &&
              !is_serializable_v<std::optional<no_default>>);

TEST(IsSerializable, ClosuresAreNotSerializableThemselves) {
  int x = 1;
  auto closure = [x] { return x; };
  static_assert(!is_serializable_v<decltype(closure)>);
  EXPECT_EQ(closure(), 1);
}

// ---------------------------------------------------------------------------------------------
// Fundamental types

template <class T>
class Arithmetic : public ::testing::Test {};
using arithmetic_types = ::testing::Types<char, signed char, unsigned char, wchar_t, char8_t, char16_t, char32_t, short,
                                          unsigned short, int, unsigned, long, unsigned long, long long,
                                          unsigned long long, float, double>;
TYPED_TEST_SUITE(Arithmetic, arithmetic_types);

TYPED_TEST(Arithmetic, RoundTripsExtremesWithFixedWidth) {
  using T = TypeParam;
  for (T v : {std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max(), std::numeric_limits<T>::min(), T{},
              static_cast<T>(1)}) {
    const byte_buffer b = to_bytes(v);
    ASSERT_EQ(b.size(), sizeof(T));
    EXPECT_EQ(from_bytes<T>(b.span()), v);
  }
}

TEST(Archive, IntegersAreLittleEndian) {
  const byte_buffer b = to_bytes(std::uint32_t{0x11223344}, std::int16_t{-2});
  const std::vector<std::byte> expected = {std::byte{0x44}, std::byte{0x33}, std::byte{0x22}, std::byte{0x11},
                                           std::byte{0xfe}, std::byte{0xff}};
  EXPECT_EQ(cppless_test::bytes_of(b), expected);
}

TEST(Archive, FloatingPointKeepsEveryBit) {
  EXPECT_TRUE(std::isnan(round_trip(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_EQ(round_trip(std::numeric_limits<double>::infinity()), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::signbit(round_trip(-0.0)));
  EXPECT_EQ(round_trip(std::numeric_limits<float>::denorm_min()), std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(round_trip(1.5L), 1.5L);
}

TEST(Archive, BoolIsOneByte) {
  const byte_buffer b = to_bytes(true, false);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b.data()[0], std::byte{1});
  EXPECT_EQ(b.data()[1], std::byte{0});
  EXPECT_TRUE(round_trip(true));
  EXPECT_FALSE(round_trip(false));
}

TEST(Archive, EnumsTravelAsTheirUnderlyingType) {
  EXPECT_EQ(to_bytes(color::blue).size(), 1u);
  EXPECT_EQ(round_trip(color::blue), color::blue);
  EXPECT_EQ(round_trip(plain_b), plain_b);
  EXPECT_EQ(round_trip(flag::on), flag::on);
  EXPECT_EQ(round_trip(std::byte{0xab}), std::byte{0xab});
}

// ---------------------------------------------------------------------------------------------
// Strings and sequences

TEST(Archive, Strings) {
  EXPECT_EQ(round_trip(std::string()), "");
  const std::string with_nul("a\0b\xff", 4);
  EXPECT_EQ(round_trip(with_nul), with_nul);
  EXPECT_EQ(round_trip(std::string(100000, 'x')), std::string(100000, 'x'));
  EXPECT_EQ(round_trip(std::wstring(L"w\u00e9ird")), L"w\u00e9ird");
  EXPECT_EQ(round_trip(std::u16string(u"\u4e2d\u6587")), u"\u4e2d\u6587");
  EXPECT_EQ(round_trip(std::u32string(U"\U0001F600")), U"\U0001F600");
  EXPECT_TRUE(round_trip(std::u8string(u8"caf\u00e9")) == u8"caf\u00e9");  // (this gtest cannot print u8string)
  // u64 length, then the characters
  EXPECT_EQ(to_bytes(std::string("abc")).size(), 8u + 3u);
  EXPECT_EQ(to_bytes(std::u32string(U"abc")).size(), 8u + 12u);
}

TEST(Archive, ArithmeticVectorsAreLengthPlusOneBlock) {
  std::vector<std::uint32_t> v(1000);
  for (std::uint32_t i = 0; i < v.size(); ++i) v[i] = i * 2654435761u;
  const byte_buffer b = to_bytes(v);
  ASSERT_EQ(b.size(), 8u + 4000u);
  std::uint64_t n;
  std::memcpy(&n, b.data(), 8);
  EXPECT_EQ(n, 1000u);
  EXPECT_EQ(std::memcmp(b.data() + 8, v.data(), 4000), 0);
  EXPECT_EQ(from_bytes<std::vector<std::uint32_t>>(b.span()), v);
  EXPECT_EQ(round_trip(std::vector<double>{}), std::vector<double>{});
  EXPECT_EQ(round_trip(std::vector<color>{color::red, color::blue}), (std::vector<color>{color::red, color::blue}));
  const std::vector<std::complex<double>> c = {{1, 2}, {-3, 4.5}};
  EXPECT_EQ(to_bytes(c).size(), 8u + 32u);
  EXPECT_EQ(round_trip(c), c);
}

TEST(Archive, VectorOfBoolIsPackedBits) {
  for (std::size_t n = 0; n <= 40; ++n) {
    std::vector<bool> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = (i * 7 + n) % 3 == 0;
    const byte_buffer b = to_bytes(v);
    EXPECT_EQ(b.size(), 8 + (n + 7) / 8);
    EXPECT_EQ(from_bytes<std::vector<bool>>(b.span()), v) << n;
  }
}

TEST(Archive, VectorsOfClassTypes) {
  const std::vector<std::string> s = {"", "a", std::string(300, 'z')};
  EXPECT_EQ(round_trip(s), s);
  const std::vector<std::vector<int>> nested = {{}, {1}, {2, 3, 4}};
  EXPECT_EQ(round_trip(nested), nested);
  const std::vector<point> pts = {{1, 2}, {3, 4}};
  EXPECT_EQ(round_trip(pts), pts);
}

TEST(Archive, LoadingIntoAUsedContainerReplacesItsContent) {
  std::vector<std::string> target = {"old", "values", "here", "and", "more"};
  from_bytes(to_bytes(std::vector<std::string>{"x", "y"}).span(), target);
  EXPECT_EQ(target, (std::vector<std::string>{"x", "y"}));
  std::map<int, int> m = {{9, 9}};
  from_bytes(to_bytes(std::map<int, int>{{1, 2}}).span(), m);
  EXPECT_EQ(m, (std::map<int, int>{{1, 2}}));
  std::optional<int> o = 5;
  from_bytes(to_bytes(std::optional<int>{}).span(), o);
  EXPECT_FALSE(o);
}

TEST(Archive, FixedSizeArrays) {
  const std::array<int, 3> a = {1, -2, 3};
  EXPECT_EQ(to_bytes(a).size(), 12u);  // no length
  EXPECT_EQ(round_trip(a), a);
  EXPECT_EQ(round_trip(std::array<std::string, 2>{"p", "q"}), (std::array<std::string, 2>{"p", "q"}));
  EXPECT_EQ(to_bytes(std::array<int, 0>{}).size(), 0u);
  EXPECT_EQ(round_trip(std::array<bool, 3>{true, false, true}), (std::array<bool, 3>{true, false, true}));

  const int c[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const byte_buffer b = to_bytes(c);
  EXPECT_EQ(b.size(), 24u);
  int d[2][3] = {};
  from_bytes(b.span(), d);
  EXPECT_EQ(std::memcmp(c, d, sizeof c), 0);
  std::string s[2] = {"x", "yy"};
  std::string t[2];
  from_bytes(to_bytes(s).span(), t);
  EXPECT_EQ(t[1], "yy");
}

TEST(Archive, OtherSequences) {
  EXPECT_EQ(round_trip(std::list<int>{3, 1, 2}), (std::list<int>{3, 1, 2}));
  EXPECT_EQ(round_trip(std::deque<std::string>{"a", "b"}), (std::deque<std::string>{"a", "b"}));
  EXPECT_EQ(round_trip(std::forward_list<int>{5, 6, 7}), (std::forward_list<int>{5, 6, 7}));
  EXPECT_EQ(round_trip(std::forward_list<int>{}), std::forward_list<int>{});
  const std::valarray<int> va = {1, 2, 3};
  EXPECT_TRUE((round_trip(va) == va).min());
  const std::valarray<std::string> vs = {"a", "b"};
  EXPECT_TRUE((round_trip(vs) == vs).min());
  EXPECT_EQ(round_trip(std::stack<int>(std::deque<int>{1, 2})), std::stack<int>(std::deque<int>{1, 2}));
  EXPECT_EQ(round_trip(std::queue<std::string>(std::deque<std::string>{"x"})),
            std::queue<std::string>(std::deque<std::string>{"x"}));
  std::priority_queue<int> pq;
  for (int x : {5, 1, 9, 3}) pq.push(x);
  auto back = round_trip(pq);
  std::vector<int> order;
  while (!back.empty()) order.push_back(back.top()), back.pop();
  EXPECT_EQ(order, (std::vector<int>{9, 5, 3, 1}));
}

// ---------------------------------------------------------------------------------------------
// Associative containers

TEST(Archive, Maps) {
  const std::map<std::string, int> m = {{"a", 1}, {"b", 2}, {"c", 3}};
  EXPECT_EQ(round_trip(m), m);
  const std::multimap<int, std::string> mm = {{1, "x"}, {1, "y"}, {2, "z"}};
  EXPECT_EQ(round_trip(mm), mm);
  const std::unordered_map<std::string, std::vector<int>> um = {{"k", {1, 2}}, {"l", {}}};
  EXPECT_EQ(round_trip(um), um);
  const std::unordered_multimap<int, int> umm = {{1, 1}, {1, 2}, {3, 3}};
  EXPECT_EQ(round_trip(umm), umm);
  EXPECT_EQ(round_trip(std::map<point, int>{{{1, 2}, 3}}), (std::map<point, int>{{{1, 2}, 3}}));
  EXPECT_EQ(round_trip(std::map<int, int, std::greater<>>{{1, 1}, {2, 2}}), (std::map<int, int, std::greater<>>{{1, 1}, {2, 2}}));
  EXPECT_EQ(to_bytes(std::map<int, int>{{1, 2}}).size(), 8u + 8u);
}

TEST(Archive, Sets) {
  EXPECT_EQ(round_trip(std::set<int>{3, 1, 2}), (std::set<int>{1, 2, 3}));
  EXPECT_EQ(round_trip(std::multiset<int>{1, 1, 2}), (std::multiset<int>{1, 1, 2}));
  EXPECT_EQ(round_trip(std::unordered_set<std::string>{"a", "b"}), (std::unordered_set<std::string>{"a", "b"}));
  EXPECT_EQ(round_trip(std::unordered_multiset<int>{4, 4, 5}), (std::unordered_multiset<int>{4, 4, 5}));
  EXPECT_EQ(round_trip(std::set<std::string>{}), std::set<std::string>{});
}

// ---------------------------------------------------------------------------------------------
// pair, tuple, optional, variant, pointers, chrono, complex, bitset, atomic

TEST(Archive, PairAndTuple) {
  EXPECT_EQ(round_trip(std::pair<int, std::string>{4, "four"}), (std::pair<int, std::string>{4, "four"}));
  const auto t = std::make_tuple(1, 2.5, std::string("x"), std::vector<int>{1}, color::green);
  EXPECT_EQ(round_trip(t), t);
  EXPECT_EQ(to_bytes(std::tuple<>{}).size(), 0u);
  EXPECT_EQ(to_bytes(std::pair<std::int8_t, std::int64_t>{}).size(), 9u);
}

TEST(Archive, Optional) {
  EXPECT_EQ(to_bytes(std::optional<int>{}).size(), 1u);
  EXPECT_EQ(to_bytes(std::optional<int>{7}).size(), 5u);
  EXPECT_EQ(round_trip(std::optional<int>{}), std::nullopt);
  EXPECT_EQ(round_trip(std::optional<std::string>{"s"}), std::optional<std::string>{"s"});
  EXPECT_EQ(round_trip(std::optional<std::optional<int>>{std::optional<int>{}}),
            std::optional<std::optional<int>>{std::optional<int>{}});
}

TEST(Archive, Variant) {
  using V = std::variant<std::monostate, int, std::string, std::vector<double>, int>;
  for (const V& v : {V{}, V{std::in_place_index<1>, 5}, V{"str"}, V{std::vector<double>{1.5}}, V{std::in_place_index<4>, 6}}) {
    const V back = round_trip(v);
    EXPECT_EQ(back.index(), v.index());
    EXPECT_EQ(back, v);
  }
  EXPECT_EQ(to_bytes(V{}).size(), 4u);
  EXPECT_EQ(to_bytes(std::monostate{}).size(), 0u);
}

TEST(Archive, UniquePtr) {
  EXPECT_EQ(round_trip(std::unique_ptr<int>{}), nullptr);
  EXPECT_EQ(*round_trip(std::make_unique<std::string>("u")), "u");
  EXPECT_EQ(to_bytes(std::make_unique<std::int32_t>(1)).size(), 5u);
  const auto nested = round_trip(std::make_unique<std::unique_ptr<point>>(std::make_unique<point>(point{1, 2})));
  EXPECT_EQ(**nested, (point{1, 2}));
}

TEST(Archive, SharedPtr) {
  EXPECT_EQ(round_trip(std::shared_ptr<int>{}), nullptr);
  EXPECT_EQ(*round_trip(std::make_shared<const std::string>("c")), "c");
  // Identity and polymorphism: tests/serialization/pointer_test.cpp.
}

namespace {
struct throws_on_copy {
  throws_on_copy() = default;
  throws_on_copy(const throws_on_copy&) { throw 1; }
  throws_on_copy& operator=(const throws_on_copy&) = default;
  template <class A>
  void serialize(A&) {}
};
}  // namespace

TEST(Archive, ValuelessVariantIsRefused) {
  std::variant<int, throws_on_copy> v;
  try {
    v.emplace<1>(throws_on_copy{});
  } catch (int) {
  }
  ASSERT_TRUE(v.valueless_by_exception());
  EXPECT_THROW((void)to_bytes(v), cppless::error);
}

TEST(Archive, Chrono) {
  EXPECT_EQ(round_trip(std::chrono::milliseconds(1234)), std::chrono::milliseconds(1234));
  EXPECT_EQ(round_trip(std::chrono::duration<double>(0.25)), std::chrono::duration<double>(0.25));
  const auto now = std::chrono::system_clock::now();
  EXPECT_EQ(round_trip(now), now);
  EXPECT_EQ(to_bytes(std::chrono::seconds(1)).size(), sizeof(std::chrono::seconds::rep));
}

TEST(Archive, ComplexBitsetAtomic) {
  EXPECT_EQ(round_trip(std::complex<double>(1, -2)), std::complex<double>(1, -2));
  std::bitset<13> bits;
  bits.set(0).set(5).set(12);
  EXPECT_EQ(to_bytes(bits).size(), 2u);
  EXPECT_EQ(round_trip(bits), bits);
  std::atomic<int> a{42};
  std::atomic<int> b{0};
  from_bytes(to_bytes(a).span(), b);
  EXPECT_EQ(b.load(), 42);
}

// ---------------------------------------------------------------------------------------------
// Nested combinations

TEST(Archive, NestedCombinations) {
  using M = std::map<std::string, std::vector<std::optional<int>>>;
  const M m = {{"a", {1, std::nullopt, 3}}, {"b", {}}, {"c", {std::nullopt}}};
  EXPECT_EQ(round_trip(m), m);

  using V = std::vector<std::variant<int, std::string, std::vector<double>, std::map<int, std::set<std::string>>>>;
  const V v = {1, "two", std::vector<double>{3.0}, std::map<int, std::set<std::string>>{{4, {"four", "vier"}}}};
  EXPECT_EQ(round_trip(v), v);

  using T = std::tuple<std::pair<int, std::list<std::string>>, std::array<std::optional<point>, 2>, std::deque<bool>>;
  const T t = {{1, {"x", "y"}}, {point{1, 2}, std::nullopt}, {true, false, true}};
  EXPECT_EQ(round_trip(t), t);

  std::optional<std::map<int, std::unique_ptr<std::string>>> o;
  o.emplace();
  (*o)[1] = std::make_unique<std::string>("one");
  (*o)[2] = nullptr;
  const auto back = round_trip(o);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back->at(1), "one");
  EXPECT_EQ(back->at(2), nullptr);

  const std::unordered_map<int, std::vector<std::vector<std::string>>> deep = {{1, {{"a"}, {}, {"b", "c"}}}};
  EXPECT_EQ(round_trip(deep), deep);
}

TEST(Archive, SeveralValuesInOneArchive) {
  byte_buffer out;
  output_archive oa(out);
  oa(1, std::string("two"), 3.0);
  oa << std::vector<int>{4} & color::red;
  int a = 0;
  std::string b;
  double c = 0;
  std::vector<int> d;
  color e{};
  input_archive ia(out.span());
  ia(a, b, c);
  ia >> d & e;
  ia.expect_end();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, "two");
  EXPECT_EQ(c, 3.0);
  EXPECT_EQ(d, std::vector<int>{4});
  EXPECT_EQ(e, color::red);
  EXPECT_EQ(ia.remaining(), 0u);
  EXPECT_EQ(ia.position(), out.size());
}

TEST(Archive, OutputArchiveAppends) {
  byte_buffer out;
  out.append("hdr", 3);
  output_archive{out}(std::uint8_t{9});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out.data()[3], std::byte{9});
  input_archive in(out.data() + 3, 1);
  std::uint8_t x = 0;
  in(x);
  EXPECT_EQ(x, 9);
}

TEST(Archive, RawBytes) {
  byte_buffer out;
  output_archive oa(out);
  oa.write_bytes("raw!", 4);
  char back[4];
  input_archive ia(out.span());
  ia.read_bytes(back, 4);
  EXPECT_EQ(std::memcmp(back, "raw!", 4), 0);
  EXPECT_THROW(ia.read_bytes(back, 1), cppless::decode_error);
}

TEST(Archive, ArchivesAnnounceTheirDirectionLikeCereal) {
  static_assert(output_archive::is_saving::value && !output_archive::is_loading::value);
  static_assert(input_archive::is_loading::value && !input_archive::is_saving::value);
}

namespace {
struct s {
  int a = 0, b = 0;
  std::string text;
  template <class A>
  void serialize(A& ar) {
    ar(a, b, text);
  }
  bool operator==(const s&) const = default;
};
}  // namespace

TEST(Archive, LargeVectorOfStructsReservesOnce) {
  std::vector<s> v(10000);
  for (int i = 0; i < 10000; ++i) v[static_cast<std::size_t>(i)] = {i, -i, std::string(42, static_cast<char>('a' + i % 26))};
  const byte_buffer b = to_bytes(v);
  EXPECT_EQ(b.size(), 8u + 10000u * (4 + 4 + 8 + 42));
  EXPECT_LE(b.capacity(), b.size() + 64);  // the guess from the first element was exact
  EXPECT_EQ(from_bytes<std::vector<s>>(b.span()), v);
}

TEST(Archive, ConstValuesSaveButDoNotLoad) {
  static_assert(cppless::is_saveable_v<const int[3]> && cppless::is_serializable_v<const int[3]>);
  static_assert(!cppless::detail::codec<const int[3]>::loadable && cppless::detail::codec<const int[3]>::min_size == 12);
  static_assert(!is_serializable_v<std::pair<const int, int>> && cppless::is_saveable_v<std::pair<const int, int>>);
  const std::pair<const int, std::string> p{1, "x"};
  const byte_buffer b = to_bytes(p);
  const auto back = from_bytes<std::pair<int, std::string>>(b.span());
  EXPECT_EQ(back, (std::pair<int, std::string>{1, "x"}));
}
