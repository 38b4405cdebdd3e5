// User types written for cereal work with the cppless archive unchanged, and the very same
// types still work with cereal's own archives in the same translation unit.
#include "test_util.hpp"

#include <cereal/archives/binary.hpp>
#include <cereal/cereal.hpp>
#include <cereal/types/base_class.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/memory.hpp>
#include <cereal/types/optional.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using cppless::byte_buffer;
using cppless::from_bytes;
using cppless::is_serializable_v;
using cppless::to_bytes;
using cppless_test::round_trip;

namespace user {

// 1. member serialize
struct member_serialize {
  int a = 0;
  std::string b;
  std::vector<double> c;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(a, b, c);
  }
  bool operator==(const member_serialize&) const = default;
};

// 2. member serialize with a version
struct member_serialize_versioned {
  int a = 0;
  std::uint32_t seen_version = 99;
  template <class Archive>
  void serialize(Archive& ar, std::uint32_t const version) {
    ar(a);
    seen_version = version;
  }
};

// 3. member save/load
class member_split {
 public:
  member_split() = default;
  explicit member_split(std::string s) : s_(std::move(s)) {}
  template <class Archive>
  void save(Archive& ar) const {
    ar(s_, static_cast<std::uint32_t>(s_.size()));
  }
  template <class Archive>
  void load(Archive& ar) {
    std::uint32_t size = 0;
    ar(s_, size);
    loaded_size_ = size;
  }
  const std::string& s() const { return s_; }
  std::uint32_t loaded_size() const { return loaded_size_; }

 private:
  std::string s_;
  std::uint32_t loaded_size_ = 0;
};

// 4. member save/load with versions
struct member_split_versioned {
  int x = 0;
  template <class Archive>
  void save(Archive& ar, std::uint32_t const) const {
    ar(x);
  }
  template <class Archive>
  void load(Archive& ar, std::uint32_t const) {
    ar(x);
  }
};

// 5. member save_minimal/load_minimal
struct member_minimal {
  int value = 0;
  template <class Archive>
  std::string save_minimal(Archive const&) const {
    return std::to_string(value);
  }
  template <class Archive>
  void load_minimal(Archive const&, std::string const& s) {
    value = std::stoi(s);
  }
};

// 6. free serialize
struct free_serialize {
  int a = 0;
  std::map<std::string, int> m;
  bool operator==(const free_serialize&) const = default;
};
template <class Archive>
void serialize(Archive& ar, free_serialize& v) {
  ar(v.a, v.m);
}

// 7. free serialize with a version
struct free_serialize_versioned {
  int a = 0;
};
template <class Archive>
void serialize(Archive& ar, free_serialize_versioned& v, std::uint32_t const) {
  ar(v.a);
}

// 8. free save/load
struct free_split {
  std::vector<int> data;
};
template <class Archive>
void save(Archive& ar, const free_split& v) {
  ar(v.data);
}
template <class Archive>
void load(Archive& ar, free_split& v) {
  ar(v.data);
}

// 9. free save/load with versions
struct free_split_versioned {
  double d = 0;
};
template <class Archive>
void save(Archive& ar, const free_split_versioned& v, std::uint32_t const) {
  ar(v.d);
}
template <class Archive>
void load(Archive& ar, free_split_versioned& v, std::uint32_t const) {
  ar(v.d);
}

// 10. free save_minimal/load_minimal
struct free_minimal {
  std::int64_t ticks = 0;
};
template <class Archive>
std::int64_t save_minimal(Archive const&, const free_minimal& v) {
  return v.ticks;
}
template <class Archive>
void load_minimal(Archive const&, free_minimal& v, std::int64_t const& value) {
  v.ticks = value;
}

// 11. private members behind friend cereal::access
class private_cereal {
 public:
  private_cereal() = default;
  explicit private_cereal(int v) : v_(v) {}
  int v() const { return v_; }

 private:
  friend class cereal::access;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(v_);
  }
  int v_ = 0;
};

// 12. private members behind friend cppless::access
class private_cppless {
 public:
  private_cppless() = default;
  explicit private_cppless(int v) : v_(v) {}
  int v() const { return v_; }

 private:
  friend class cppless::access;
  template <class Archive>
  void save(Archive& ar) const {
    ar(v_);
  }
  template <class Archive>
  void load(Archive& ar) {
    ar(v_);
  }
  int v_ = 0;
};

// 13. names: CEREAL_NVP, make_nvp, CEREAL_NVP_ (only the values travel)
struct with_names {
  int id = 0;
  std::string name;
  std::vector<int> values;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(CEREAL_NVP(id), cereal::make_nvp("the_name", name), CEREAL_NVP_("values", values));
  }
  bool operator==(const with_names&) const = default;
};

// 14. base_class
struct animal {
  int legs = 4;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(legs);
  }
};
struct dog : animal {
  std::string name;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(cereal::base_class<animal>(this), name);
  }
};

// 15. a hand-written container serializer with make_size_tag and binary_data
struct blob {
  std::vector<std::uint16_t> items;
  template <class Archive>
  void save(Archive& ar) const {
    cereal::size_type n = items.size();
    ar(cereal::make_size_tag(n));
    ar(cereal::binary_data(items.data(), items.size() * sizeof(std::uint16_t)));
  }
  template <class Archive>
  void load(Archive& ar) {
    cereal::size_type n = 0;
    ar(cereal::make_size_tag(n));
    items.resize(static_cast<std::size_t>(n));
    ar(cereal::binary_data(items.data(), items.size() * sizeof(std::uint16_t)));
  }
};

// 16. is_saving / is_loading branches
struct directional {
  int x = 0;
  int loads = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(x);
    if constexpr (Archive::is_loading::value) ++loads;
  }
};

// 17. a recursive type
struct node {
  int value = 0;
  std::vector<node> children;
  std::unique_ptr<node> next;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(value, children, next);
  }
};

// 18. operator & style
struct ampersand {
  int a = 0, b = 0;
  template <class Archive>
  void serialize(Archive& ar) {
    ar & a & b;
  }
};

}  // namespace user

// 19. a third-party type, serialized by a function the user put in namespace cereal
namespace third_party {
struct vec3 {
  float x = 0, y = 0, z = 0;
  bool operator==(const vec3&) const = default;
};
}  // namespace third_party
namespace cereal {
template <class Archive>
void serialize(Archive& ar, third_party::vec3& v) {
  ar(v.x, v.y, v.z);
}
}  // namespace cereal

// 20. a registered class version
namespace user {
struct versioned_v3 {
  std::uint32_t seen_version = 99;
  template <class Archive>
  void serialize(Archive&, std::uint32_t const version) {
    seen_version = version;
  }
};
}  // namespace user
CEREAL_CLASS_VERSION(user::versioned_v3, 3)

static_assert(is_serializable_v<user::member_serialize> && is_serializable_v<user::member_serialize_versioned> &&
              is_serializable_v<user::member_split> && is_serializable_v<user::member_split_versioned> &&
              is_serializable_v<user::member_minimal> && is_serializable_v<user::free_serialize> &&
              is_serializable_v<user::free_serialize_versioned> && is_serializable_v<user::free_split> &&
              is_serializable_v<user::free_split_versioned> && is_serializable_v<user::free_minimal> &&
              is_serializable_v<user::private_cereal> && is_serializable_v<user::private_cppless> &&
              is_serializable_v<user::with_names> && is_serializable_v<user::dog> && is_serializable_v<user::blob> &&
              is_serializable_v<user::node> && is_serializable_v<third_party::vec3> &&
              is_serializable_v<std::vector<std::map<int, user::free_serialize>>>);

TEST(UserTypes, MemberSerialize) {
  const user::member_serialize v{7, "seven", {7.5}};
  EXPECT_EQ(round_trip(v), v);
  EXPECT_EQ(to_bytes(v).size(), 4u + (8 + 5) + (8 + 8));
}

TEST(UserTypes, MemberSerializeVersionedGetsZero) {
  user::member_serialize_versioned v;
  v.a = 3;
  const auto back = round_trip(v);
  EXPECT_EQ(back.a, 3);
  EXPECT_EQ(back.seen_version, 0u);
}

TEST(UserTypes, RegisteredClassVersionIsPassed) {
  EXPECT_EQ(round_trip(user::versioned_v3{}).seen_version, 3u);
}

TEST(UserTypes, MemberSaveLoad) {
  const auto back = round_trip(user::member_split("hello"));
  EXPECT_EQ(back.s(), "hello");
  EXPECT_EQ(back.loaded_size(), 5u);
  user::member_split_versioned v;
  v.x = 11;
  EXPECT_EQ(round_trip(v).x, 11);
}

TEST(UserTypes, MemberMinimal) {
  user::member_minimal v;
  v.value = 1234;
  EXPECT_EQ(to_bytes(v).size(), 8u + 4u);  // travels as the string "1234"
  EXPECT_EQ(round_trip(v).value, 1234);
}

TEST(UserTypes, FreeFunctions) {
  const user::free_serialize fs{1, {{"a", 2}}};
  EXPECT_EQ(round_trip(fs), fs);
  EXPECT_EQ(round_trip(user::free_serialize_versioned{5}).a, 5);
  EXPECT_EQ(round_trip(user::free_split{{1, 2, 3}}).data, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(round_trip(user::free_split_versioned{2.5}).d, 2.5);
  EXPECT_EQ(round_trip(user::free_minimal{-9}).ticks, -9);
  EXPECT_EQ(to_bytes(user::free_minimal{-9}).size(), 8u);
}

TEST(UserTypes, PrivateMembersThroughAccessFriends) {
  EXPECT_EQ(round_trip(user::private_cereal(5)).v(), 5);
  EXPECT_EQ(round_trip(user::private_cppless(6)).v(), 6);
}

TEST(UserTypes, NameValuePairsCarryOnlyTheValue) {
  const user::with_names v{1, "n", {2, 3}};
  EXPECT_EQ(to_bytes(v).size(), 4u + (8 + 1) + (8 + 8));
  EXPECT_EQ(round_trip(v), v);
}

TEST(UserTypes, BaseClass) {
  user::dog d;
  d.legs = 3;
  d.name = "rex";
  const auto back = round_trip(d);
  EXPECT_EQ(back.legs, 3);
  EXPECT_EQ(back.name, "rex");
}

TEST(UserTypes, SizeTagAndBinaryData) {
  user::blob b;
  b.items = {1, 2, 65535};
  EXPECT_EQ(to_bytes(b).size(), 8u + 6u);
  EXPECT_EQ(round_trip(b).items, b.items);
}

TEST(UserTypes, ASizeTagBeyondThePayloadIsRefusedBeforeTheUserAllocates) {
  std::vector<std::byte> payload;
  cppless_test::put(payload, std::uint64_t{1} << 60);
  EXPECT_THROW((void)from_bytes<user::blob>(payload), cppless::decode_error);
}

TEST(UserTypes, DirectionTraits) {
  user::directional d;
  d.x = 4;
  const auto back = round_trip(d);
  EXPECT_EQ(back.x, 4);
  EXPECT_EQ(back.loads, 1);
}

TEST(UserTypes, RecursiveType) {
  user::node root;
  root.value = 1;
  root.children.resize(2);
  root.children[1].value = 3;
  root.children[1].children.resize(1);
  root.next = std::make_unique<user::node>();
  root.next->value = 9;
  const auto back = round_trip(root);
  EXPECT_EQ(back.value, 1);
  EXPECT_EQ(back.children.size(), 2u);
  EXPECT_EQ(back.children[1].value, 3);
  EXPECT_EQ(back.children[1].children.size(), 1u);
  ASSERT_TRUE(back.next);
  EXPECT_EQ(back.next->value, 9);
}

TEST(UserTypes, AmpersandOperator) {
  const auto back = round_trip(user::ampersand{1, 2});
  EXPECT_EQ(back.a, 1);
  EXPECT_EQ(back.b, 2);
}

TEST(UserTypes, FreeSerializeInNamespaceCerealIsFound) {
  const third_party::vec3 v{1, 2, 3};
  EXPECT_EQ(to_bytes(v).size(), 12u);
  EXPECT_EQ(round_trip(v), v);
  EXPECT_EQ(round_trip(std::vector<third_party::vec3>{v, v}), (std::vector<third_party::vec3>{v, v}));
}

TEST(UserTypes, SerializeIsCalledOnAConstObjectDuringSave) {
  const user::member_serialize v{1, "c", {}};
  const byte_buffer b = to_bytes(v);  // compiles: const_cast as in cereal
  EXPECT_EQ(from_bytes<user::member_serialize>(b.span()), v);
}

// ---------------------------------------------------------------------------------------------
// The same user code, unchanged, with cereal's own archives.

template <class T>
T cereal_binary_round_trip(const T& value) {
  std::stringstream ss;
  {
    cereal::BinaryOutputArchive ar(ss);
    ar(value);
  }
  T back;
  {
    cereal::BinaryInputArchive ar(ss);
    ar(back);
  }
  return back;
}

TEST(CerealStillWorks, SameTypesThroughCerealBinaryArchive) {
  const user::member_serialize v{7, "seven", {7.5}};
  EXPECT_EQ(cereal_binary_round_trip(v), v);
  const user::with_names n{1, "n", {2, 3}};
  EXPECT_EQ(cereal_binary_round_trip(n), n);
  const user::free_serialize fs{1, {{"a", 2}}};
  EXPECT_EQ(cereal_binary_round_trip(fs), fs);
  EXPECT_EQ(cereal_binary_round_trip(user::private_cereal(5)).v(), 5);
  user::dog d;
  d.legs = 3;
  d.name = "rex";
  EXPECT_EQ(cereal_binary_round_trip(d).name, "rex");
  user::blob b;
  b.items = {1, 2, 3};
  EXPECT_EQ(cereal_binary_round_trip(b).items, b.items);
  EXPECT_EQ(cereal_binary_round_trip(third_party::vec3{1, 2, 3}), (third_party::vec3{1, 2, 3}));
  EXPECT_EQ(cereal_binary_round_trip(user::versioned_v3{}).seen_version, 3u);
  std::map<std::string, std::optional<std::vector<int>>> m = {{"x", std::vector<int>{1}}, {"y", std::nullopt}};
  EXPECT_EQ(cereal_binary_round_trip(m), m);
}
