// Smart pointers: polymorphic classes behind a base pointer (CPPLESS_REGISTER_TYPE), shared_ptr
// identity within one payload, cycles, and hostile payloads for all of it.
#include "test_util.hpp"

#include <cppless/archive.hpp>
#include <cppless/capture.hpp>

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace cppless;
using cppless_test::put;
using cppless_test::round_trip;

namespace shapes {
struct shape {
  virtual ~shape() = default;
  virtual double area() const = 0;
  std::string label;
  template <class A>
  void serialize(A& ar) {
    ar(label);
  }
};
struct circle : shape {
  double r = 0;
  double area() const override { return 3.0 * r * r; }
  template <class A>
  void serialize(A& ar) {
    shape::serialize(ar);
    ar(r);
  }
};
struct rect : shape {
  double w = 0, h = 0;
  double area() const override { return w * h; }
  template <class A>
  void serialize(A& ar) {
    shape::serialize(ar);
    ar(w, h);
  }
};
struct square : rect {  // two levels down
  template <class A>
  void serialize(A& ar) {
    rect::serialize(ar);
  }
};
struct unregistered : shape {
  double area() const override { return 0; }
  template <class A>
  void serialize(A&) {}
};
// A second, unrelated hierarchy: a registered id of one must not load as the other.
struct animal {
  virtual ~animal() = default;
  int legs = 4;
  template <class A>
  void serialize(A& ar) {
    ar(legs);
  }
};
struct bird : animal {
  template <class A>
  void serialize(A& ar) {
    animal::serialize(ar);
  }
};
// Multiple inheritance: the base is not at the object's address.
struct tagged {
  virtual ~tagged() = default;
  int tag = 7;
};
struct tagged_circle : tagged, circle {
  template <class A>
  void serialize(A& ar) {
    circle::serialize(ar);
    ar(tag);
  }
};
}  // namespace shapes

CPPLESS_REGISTER_TYPE(shapes::circle);
CPPLESS_REGISTER_TYPE(shapes::rect);
CPPLESS_REGISTER_TYPE(shapes::square);
CPPLESS_REGISTER_TYPE(shapes::bird);
CPPLESS_REGISTER_TYPE(shapes::tagged_circle);
CPPLESS_REGISTER_TYPE(shapes::circle);  // twice is harmless

namespace {

std::unique_ptr<shapes::shape> make_circle(double r, std::string label) {
  auto c = std::make_unique<shapes::circle>();
  c->r = r;
  c->label = std::move(label);
  return c;
}

std::unique_ptr<shapes::shape> make_rect(double w, double h) {
  auto x = std::make_unique<shapes::rect>();
  x->w = w;
  x->h = h;
  return x;
}

template <class T>
void expect_decode_error(std::span<const std::byte> bytes, const std::string& fragment) {
  try {
    (void)from_bytes<T>(bytes);
    ADD_FAILURE() << "no decode_error; expected one mentioning \"" << fragment << "\"";
  } catch (const decode_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace

static_assert(is_serializable_v<std::unique_ptr<shapes::shape>> && is_serializable_v<std::shared_ptr<shapes::shape>>);
static_assert(is_serializable_v<std::shared_ptr<const shapes::shape>>);

TEST(Polymorphic, UniquePtrToBaseKeepsTheDerivedClass) {
  std::vector<std::unique_ptr<shapes::shape>> scene;
  scene.push_back(make_circle(2, "c"));
  scene.push_back(make_rect(3, 4));
  scene.push_back(nullptr);
  auto sq = std::make_unique<shapes::square>();
  sq->w = sq->h = 5;
  scene.push_back(std::move(sq));

  const auto back = round_trip(scene);
  ASSERT_EQ(back.size(), 4u);
  ASSERT_NE(dynamic_cast<shapes::circle*>(back[0].get()), nullptr);
  EXPECT_EQ(back[0]->label, "c");
  EXPECT_EQ(back[0]->area(), 12.0);
  ASSERT_NE(dynamic_cast<shapes::rect*>(back[1].get()), nullptr);
  EXPECT_EQ(back[1]->area(), 12.0);
  EXPECT_EQ(back[2], nullptr);
  ASSERT_NE(dynamic_cast<shapes::square*>(back[3].get()), nullptr);
  EXPECT_EQ(back[3]->area(), 25.0);
}

TEST(Polymorphic, BaseNotAtTheObjectsAddress) {
  auto tc = std::make_shared<shapes::tagged_circle>();
  tc->r = 1;
  tc->tag = 9;
  std::shared_ptr<shapes::shape> as_shape = tc;
  std::shared_ptr<shapes::tagged> as_tagged = tc;
  ASSERT_NE(static_cast<const void*>(as_shape.get()), static_cast<const void*>(as_tagged.get()));
  const auto back = round_trip(std::make_pair(as_shape, as_tagged));
  auto* one = dynamic_cast<shapes::tagged_circle*>(back.first.get());
  auto* two = dynamic_cast<shapes::tagged_circle*>(back.second.get());
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one, two);  // one object, reached through two different bases
  EXPECT_EQ(one->tag, 9);
  EXPECT_EQ(one->r, 1);
}

TEST(Polymorphic, UnregisteredDerivedClassIsAnErrorNamingIt) {
  std::unique_ptr<shapes::shape> p = std::make_unique<shapes::unregistered>();
  try {
    (void)to_bytes(p);
    ADD_FAILURE() << "no error";
  } catch (const cppless::error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("shapes::unregistered"), std::string::npos) << what;
    EXPECT_NE(what.find("CPPLESS_REGISTER_TYPE"), std::string::npos) << what;
  }
  std::shared_ptr<shapes::shape> s = std::make_shared<shapes::unregistered>();
  EXPECT_THROW((void)to_bytes(s), cppless::error);
}

TEST(Polymorphic, TheBaseClassItselfNeedsNoRegistration) {
  auto a = std::make_shared<shapes::animal>();
  a->legs = 6;
  EXPECT_EQ(round_trip(a)->legs, 6);
  std::unique_ptr<shapes::animal> b = std::make_unique<shapes::bird>();
  b->legs = 2;
  const auto back = round_trip(b);
  EXPECT_NE(dynamic_cast<shapes::bird*>(back.get()), nullptr);
  EXPECT_EQ(back->legs, 2);
}

TEST(SharedPtrIdentity, TwoPointersToOneObjectArriveAsOne) {
  const auto shared = std::make_shared<int>(5);
  const auto back = round_trip(std::make_pair(shared, shared));
  EXPECT_EQ(*back.first, 5);
  EXPECT_EQ(back.first, back.second);
  // The second pointer is 5 bytes (flag, index), not a second copy.
  EXPECT_EQ(to_bytes(std::make_pair(shared, shared)).size(), 1u + 4u + 1u + 4u);
}

TEST(SharedPtrIdentity, SpansTheWholeArchive) {
  auto s = std::make_shared<std::string>("shared");
  byte_buffer buf;
  output_archive out(buf);
  out(s, std::vector<std::shared_ptr<std::string>>{s, nullptr, s});
  std::shared_ptr<std::string> first;
  std::vector<std::shared_ptr<std::string>> rest;
  from_bytes(buf.span(), first, rest);
  ASSERT_EQ(rest.size(), 3u);
  EXPECT_EQ(rest[0], first);
  EXPECT_EQ(rest[1], nullptr);
  EXPECT_EQ(rest[2], first);
  EXPECT_EQ(first.use_count(), 3);  // owned by first, rest[0], rest[2]: the archive let go
}

TEST(SharedPtrIdentity, SharedPolymorphicObjectsInAGraph) {
  std::shared_ptr<shapes::shape> material = make_circle(1, "m");
  std::map<std::string, std::shared_ptr<shapes::shape>> by_name{{"a", material}, {"b", material}, {"c", make_rect(1, 2)}};
  const auto back = round_trip(by_name);
  EXPECT_EQ(back.at("a"), back.at("b"));
  EXPECT_NE(back.at("a"), back.at("c"));
  EXPECT_EQ(back.at("a")->label, "m");
}

namespace {
struct node {
  int value = 0;
  std::shared_ptr<node> next;
  template <class A>
  void serialize(A& ar) {
    ar(value, next);
  }
};
}  // namespace

TEST(SharedPtrIdentity, ADiamondIsKeptACycleIsRefused) {
  auto tail = std::make_shared<node>();
  tail->value = 3;
  auto a = std::make_shared<node>(node{1, tail});
  auto b = std::make_shared<node>(node{2, tail});
  const auto back = round_trip(std::make_pair(a, b));
  EXPECT_EQ(back.first->next, back.second->next);

  auto x = std::make_shared<node>();
  auto y = std::make_shared<node>(node{2, x});
  x->next = y;  // x -> y -> x
  try {
    (void)to_bytes(x);
    ADD_FAILURE() << "a cycle was encoded";
  } catch (const cppless::error& e) {
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
  }
  x->next.reset();  // break the cycle so the test does not leak
}

// Hostile payloads: indices, type ids and flags are all checked.
TEST(SharedPtrIdentity, HostileBackReferences) {
  std::vector<std::byte> p;
  p.push_back(std::byte{2});
  put<std::uint32_t>(p, 0);  // refers to an object before any
  expect_decode_error<std::shared_ptr<int>>(p, "only 0 came before it");

  p.clear();
  p.push_back(std::byte{3});
  expect_decode_error<std::shared_ptr<int>>(p, "must be 0, 1 or 2");

  // A node whose next refers to itself while it is being read: a cycle in the payload.
  p.clear();
  p.push_back(std::byte{1});
  put<std::int32_t>(p, 1);
  p.push_back(std::byte{2});
  put<std::uint32_t>(p, 0);
  expect_decode_error<std::shared_ptr<node>>(p, "a cycle");

  // Index of an object of another type.
  p.clear();
  p.push_back(std::byte{1});
  put<std::int32_t>(p, 1);
  p.push_back(std::byte{2});
  put<std::uint32_t>(p, 0);
  try {
    std::shared_ptr<int> i;
    std::shared_ptr<std::string> s;
    from_bytes(p, i, s);
    ADD_FAILURE() << "no error";
  } catch (const decode_error& e) {
    EXPECT_NE(std::string(e.what()).find("of another type"), std::string::npos) << e.what();
  }
}

TEST(Polymorphic, HostileTypeIds) {
  std::vector<std::byte> p;
  p.push_back(std::byte{1});
  put<std::uint64_t>(p, 12345);  // no class has this id
  expect_decode_error<std::unique_ptr<shapes::shape>>(p, "not a registered class");
  expect_decode_error<std::shared_ptr<shapes::shape>>(p, "not a registered class");

  p.clear();
  p.push_back(std::byte{1});
  put<std::uint64_t>(p, 0);  // the abstract base itself
  expect_decode_error<std::unique_ptr<shapes::shape>>(p, "abstract");

  // A registered class of another hierarchy.
  std::unique_ptr<shapes::animal> b = std::make_unique<shapes::bird>();
  const byte_buffer bird_bytes = to_bytes(b);
  expect_decode_error<std::unique_ptr<shapes::shape>>(bird_bytes.span(), "which is not a");
  expect_decode_error<std::shared_ptr<shapes::shape>>(bird_bytes.span(), "which is not a");

  // Truncated inside a derived object: nothing leaks (ASan), a decode_error.
  const byte_buffer good = to_bytes(make_circle(2, "label"));
  expect_decode_error<std::unique_ptr<shapes::shape>>(good.span().first(good.size() - 3), "truncated");
}

// A call's captures and arguments are one archive: two captures of one shared_ptr arrive as one
// object, and a polymorphic capture keeps its class.
TEST(SharedPtrIdentity, AcrossTheCapturesOfAClosure) {
  std::shared_ptr<shapes::shape> shared = make_circle(2, "shared");
  std::shared_ptr<shapes::shape> again = shared;
  auto fn = [shared, again, n = 3] { return shared->area() * n + (shared == again ? 1 : 0); };
  using F = decltype(fn);
  byte_buffer bytes;
  output_archive out(bytes);
  detail::save_closure(out, fn);
  input_archive in(bytes.data(), bytes.size());
  alignas(F) std::byte storage[sizeof(F)];
  F* copy = detail::load_closure<F>(in, storage);
  in.expect_end();
  EXPECT_EQ((*copy)(), 12.0 * 3 + 1);
  std::destroy_at(copy);
}
