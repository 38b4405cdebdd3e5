// Capture reflection: closures travel as their captures and come back equal, in-process.
#include <cppless/capture.hpp>
#include <cppless/error.hpp>

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace {

struct point {
  int x = 0, y = 0;
  template <class A>
  void serialize(A& ar) {
    ar(x, y);
  }
};

struct aggregate {
  int id;
  std::string label;
  std::vector<double> values;
};

enum class color { red, green, blue };

struct holder {  // serializable, so only the pointer-ness of `this` is wrong
  int v = 3;
  template <class A>
  void serialize(A& ar) {
    ar(v);
  }
  auto make() {
    return [this] { return v; };
  }
};

// Serializes `fn` and rebuilds it in fresh storage, then calls `check` on the copy.
template <class F, class Check>
void round_trip(const F& fn, Check check) {
  cppless::byte_buffer bytes;
  cppless::output_archive out(bytes);
  cppless::detail::save_closure(out, fn);
  cppless::input_archive in(bytes.data(), bytes.size());
  alignas(F) std::byte storage[sizeof(F)];
  F* copy = cppless::detail::load_closure<F>(in, storage);
  in.expect_end();
  check(*copy);
  std::destroy_at(copy);
}

TEST(CaptureReflection, ScalarsStringsContainers) {
  int i = 42;
  double d = 2.5;
  std::string s = "a string that is longer than the small string buffer";
  std::vector<int> v{1, 2, 3};
  std::map<std::string, std::vector<int>> m{{"a", {1}}, {"b", {2, 3}}};
  auto fn = [i, d, s, v, m] { return i + d + static_cast<double>(s.size() + v.size() + m.size()); };
  round_trip(fn, [&](auto& copy) { EXPECT_EQ(copy(), fn()); });
}

TEST(CaptureReflection, AggregatesArraysEnums) {
  aggregate a{7, "seven", {7.0, 7.5}};
  std::array<std::string, 3> names{"x", "y", "z"};
  int raw[4] = {1, 2, 3, 4};
  color c = color::blue;
  auto fn = [a, names, raw, c] {
    return a.label + std::to_string(a.id) + names[0] + names[2] + std::to_string(raw[3]) +
           std::to_string(static_cast<int>(c)) + std::to_string(a.values[1]);
  };
  round_trip(fn, [&](auto& copy) { EXPECT_EQ(copy(), fn()); });
}

TEST(CaptureReflection, UserTypesAndVocabularyTypes) {
  point p{3, 4};
  std::optional<std::string> maybe = "here";
  std::variant<int, std::string> either = std::string("text");
  auto shared = std::make_shared<std::vector<int>>(std::vector<int>{5, 6});
  auto fn = [p, maybe, either, shared] {
    return std::to_string(p.x * p.y) + *maybe + std::get<std::string>(either) + std::to_string(shared->at(1));
  };
  round_trip(fn, [&](auto& copy) { EXPECT_EQ(copy(), fn()); });
}

TEST(CaptureReflection, MoveOnlyCapture) {
  auto fn = [owned = std::make_unique<std::string>("owned")] { return *owned; };
  round_trip(fn, [](auto& copy) { EXPECT_EQ(copy(), "owned"); });
}

TEST(CaptureReflection, CapturelessAndMutable) {
  auto none = [] { return 5; };
  round_trip(none, [](auto& copy) { EXPECT_EQ(copy(), 5); });
  int counter = 1;
  auto mut = [counter]() mutable { return ++counter; };
  round_trip(mut, [](auto& copy) { EXPECT_EQ(copy(), 2); });
}

TEST(CaptureReflection, ReferenceCaptureIsRefused) {
  int local = 5;
  std::string text = "t";
  auto by_ref = [&local] { return local; };
  auto by_ref_class = [&text] { return text; };
  cppless::byte_buffer bytes;
  cppless::output_archive out(bytes);
  try {
    cppless::detail::save_closure(out, by_ref);
    FAIL() << "reference capture was accepted";
  } catch (const cppless::capture_error& e) {
    EXPECT_NE(std::string(e.what()).find("by reference"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("capture #1 of type 'int &'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cppless::detail::save_closure(out, by_ref_class), cppless::capture_error);
}

TEST(CaptureReflection, RawPointerAndThisAreRefused) {
  int value = 1;
  int* pointer = &value;
  auto fn = [pointer] { return *pointer; };
  cppless::byte_buffer bytes;
  cppless::output_archive out(bytes);
  try {
    cppless::detail::save_closure(out, fn);
    FAIL() << "raw pointer capture was accepted";
  } catch (const cppless::capture_error& e) {
    EXPECT_NE(std::string(e.what()).find("raw pointer"), std::string::npos) << e.what();
  }
  holder h;
  EXPECT_THROW(cppless::detail::save_closure(out, h.make()), cppless::capture_error);
}

TEST(CaptureReflection, TruncatedPayloadIsADecodeErrorAndLeaksNothing) {
  std::string s(100, 'x');
  std::vector<std::string> v{s, s, s};
  auto fn = [s, v] { return s.size() + v.size(); };
  using F = decltype(fn);
  cppless::byte_buffer bytes;
  cppless::output_archive out(bytes);
  cppless::detail::save_closure(out, fn);
  for (std::size_t cut = 0; cut < bytes.size(); cut += 7) {
    cppless::input_archive in(bytes.data(), cut);
    alignas(F) std::byte storage[sizeof(F)];
    EXPECT_THROW(cppless::detail::load_closure<F>(in, storage), cppless::decode_error) << "cut at " << cut;
  }
}

TEST(CaptureReflection, LayoutDiffersWithCaptureTypes) {
  int a = 1;
  long b = 2;
  auto f1 = [a] { return a; };
  auto f2 = [b] { return b; };
  EXPECT_NE(cppless::detail::closure_layout<decltype(f1)>(), cppless::detail::closure_layout<decltype(f2)>());
  EXPECT_EQ(cppless::detail::closure_layout<decltype(f1)>(), cppless::detail::closure_layout<decltype(f1)>());
}

}  // namespace
