#include <cppless/byte_buffer.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>
#include <utility>

using cppless::byte_buffer;

static_assert(!std::is_copy_constructible_v<byte_buffer> && !std::is_copy_assignable_v<byte_buffer>);
static_assert(std::is_nothrow_move_constructible_v<byte_buffer> && std::is_nothrow_move_assignable_v<byte_buffer>);

TEST(ByteBuffer, StartsEmpty) {
  byte_buffer b;
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.capacity(), 0u);
  EXPECT_EQ(b.span().size(), 0u);
  b.append(nullptr, 0);  // a no-op, not a memcpy from null
  EXPECT_TRUE(b.empty());
}

TEST(ByteBuffer, AppendGrowsGeometrically) {
  byte_buffer b;
  std::size_t reallocations = 0;
  const std::byte* last = nullptr;
  for (int i = 0; i < 100000; ++i) {
    const auto v = static_cast<unsigned char>(i);
    b.append(&v, 1);
    if (b.data() != last) ++reallocations, last = b.data();
  }
  EXPECT_EQ(b.size(), 100000u);
  EXPECT_LE(reallocations, 20u);
  for (int i = 0; i < 100000; ++i) ASSERT_EQ(b.data()[i], static_cast<std::byte>(static_cast<unsigned char>(i)));
}

TEST(ByteBuffer, GrowUninitializedReturnsTheNewTail) {
  byte_buffer b;
  b.append("abc", 3);
  std::byte* tail = b.grow_uninitialized(4);
  EXPECT_EQ(tail, b.data() + 3);
  std::memcpy(tail, "defg", 4);
  EXPECT_EQ(b.size(), 7u);
  EXPECT_EQ(std::memcmp(b.data(), "abcdefg", 7), 0);
}

TEST(ByteBuffer, ReserveAndResize) {
  byte_buffer b(100);
  EXPECT_GE(b.capacity(), 100u);
  EXPECT_TRUE(b.empty());
  const std::byte* storage = b.data();
  b.resize_uninitialized(80);
  EXPECT_EQ(b.size(), 80u);
  EXPECT_EQ(b.data(), storage);  // no reallocation within the capacity
  b.resize_uninitialized(10);
  EXPECT_EQ(b.size(), 10u);
  b.reserve(5);  // never shrinks
  EXPECT_GE(b.capacity(), 100u);
  b.clear();
  EXPECT_TRUE(b.empty());
  EXPECT_GE(b.capacity(), 100u);  // clear keeps the storage for the next payload
}

TEST(ByteBuffer, MoveLeavesSourceEmpty) {
  byte_buffer a;
  a.append("hello", 5);
  byte_buffer b(std::move(a));
  EXPECT_EQ(b.size(), 5u);
  EXPECT_EQ(a.size(), 0u);      // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_EQ(a.capacity(), 0u);  // NOLINT(bugprone-use-after-move)
  byte_buffer c;
  c = std::move(b);
  EXPECT_EQ(c.size(), 5u);
  EXPECT_EQ(std::memcmp(c.data(), "hello", 5), 0);
}

TEST(ByteBuffer, CloneIsDeep) {
  byte_buffer a;
  a.append("hello", 5);
  byte_buffer b = a.clone();
  EXPECT_EQ(a, b);
  EXPECT_NE(a.data(), b.data());
  b.data()[0] = std::byte{'j'};
  EXPECT_FALSE(a == b);
}

TEST(ByteBuffer, Release) {
  byte_buffer a;
  a.append("xy", 2);
  auto storage = a.release();
  EXPECT_EQ(static_cast<char>(storage[1]), 'y');
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.capacity(), 0u);
}
