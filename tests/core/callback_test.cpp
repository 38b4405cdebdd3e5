// cppless::callback: inline and heap targets, move-only state, ownership (each target destroyed
// exactly once), empty callbacks.
#include <cppless/callback.hpp>

#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

struct counted {
  static inline int alive = 0;
  counted() { ++alive; }
  counted(const counted&) { ++alive; }
  counted(counted&&) noexcept { ++alive; }
  ~counted() { --alive; }
};

TEST(Callback, SmallTargetRunsInPlace) {
  int seen = 0;
  cppless::callback<void(int)> f = [&seen](int v) { seen = v; };
  ASSERT_TRUE(f);
  f(7);
  EXPECT_EQ(seen, 7);
}

TEST(Callback, LargeTargetGoesToTheHeapAndStillWorks) {
  std::array<int, 64> big{};
  big[63] = 5;
  cppless::callback<int(int)> f = [big](int v) { return big[63] + v; };
  EXPECT_EQ(f(1), 6);
  cppless::callback<int(int)> g = std::move(f);
  EXPECT_FALSE(f);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_EQ(g(2), 7);
}

TEST(Callback, MoveOnlyStateAndRvalueArguments) {
  auto owned = std::make_unique<std::string>("kept");
  cppless::callback<std::string(std::string&&)> f = [p = std::move(owned)](std::string&& s) { return *p + s; };
  EXPECT_EQ(f(std::string("!")), "kept!");
}

TEST(Callback, EveryTargetIsDestroyedExactlyOnce) {
  counted::alive = 0;
  {
    counted small;
    std::array<char, 200> pad{};
    cppless::callback<void()> a = [small] {};
    cppless::callback<void()> b = [small, pad] { (void)pad; };
    EXPECT_EQ(counted::alive, 3);
    cppless::callback<void()> c = std::move(a);
    cppless::callback<void()> d = std::move(b);
    EXPECT_EQ(counted::alive, 3);
    c = std::move(d);  // c's old target is destroyed, d's moves in
    EXPECT_EQ(counted::alive, 2);
    c = nullptr;
    EXPECT_EQ(counted::alive, 1);
  }
  EXPECT_EQ(counted::alive, 0);
}

TEST(Callback, EmptyTargetsMakeEmptyCallbacks) {
  cppless::callback<void()> none;
  EXPECT_FALSE(none);
  EXPECT_THROW(none(), std::bad_function_call);
  std::function<void()> empty;
  cppless::callback<void()> from_empty = empty;
  EXPECT_FALSE(from_empty);
  void (*null_fn)() = nullptr;
  cppless::callback<void()> from_null = null_fn;
  EXPECT_FALSE(from_null);
}

TEST(Callback, ExceptionsPassThrough) {
  cppless::callback<void()> f = [] { throw std::runtime_error("inside"); };
  EXPECT_THROW(f(), std::runtime_error);
}

}  // namespace
