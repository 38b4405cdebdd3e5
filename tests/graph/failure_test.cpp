// Failures in a graph: dependents rethrow the same error, other branches finish, await_all reports.
#include "common.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using graph_test::dispatcher;

TEST(GraphFailure, DependentsRethrowTheSameErrorAndOtherBranchesFinish) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto s = cppless::schedule(builder);
  auto bad = cppless::then(s, []() -> int { throw std::runtime_error("boom"); });
  auto good = cppless::then(s, [] { return 40; });
  auto after_bad = cppless::then(bad, [](int x) { return x + 1; });
  auto joined = cppless::when_all(good, bad);
  auto after_join = cppless::then(joined, [](int x, int y) { return x + y; });
  auto unrelated = cppless::then(good, [](int x) { return x + 2; });
  auto f_bad = bad.future(), f_after = after_bad.future(), f_join = after_join.future(), f_ok = unrelated.future();

  try {
    builder.await_all();
    FAIL() << "await_all did not report the failure";
  } catch (const cppless::graph::graph_error& e) {
    // bad itself, then after_bad, the join and after_join inherit its failure.
    ASSERT_EQ(e.failures().size(), 4u);
    EXPECT_EQ(e.failures()[0].node, bad.id());
    EXPECT_TRUE(e.failures()[0].root());
    for (const auto& f : e.failures()) EXPECT_EQ(f.cause, bad.id());
    EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4 nodes failed"), std::string::npos) << e.what();
    EXPECT_EQ(e.totals().failed, 4u);
    EXPECT_THROW(std::rethrow_exception(e.first_error()), cppless::remote_error);
  }
  EXPECT_EQ(f_ok.get(), 42);

  // Every dependent rethrows the very same exception object.
  const void* seen = nullptr;
  for (auto* f : {&f_bad, &f_after, &f_join}) {
    try {
      f->get();
      ADD_FAILURE() << "a failed node's future returned a value";
    } catch (const cppless::remote_error& e) {
      EXPECT_EQ(e.remote_type(), "std::runtime_error");
      EXPECT_EQ(e.remote_message().find("boom"), 0u);
      if (!seen) seen = &e;
      EXPECT_EQ(seen, &e);
    }
  }
  EXPECT_TRUE(f_join.failed());

  // Reported once: the next await_all has nothing new to say.
  EXPECT_NO_THROW(builder.await_all());
  // A node added later on top of a failed one fails at once, and is reported next time.
  auto late = cppless::then(bad, [](int x) { return x; });
  EXPECT_EQ(late.state(), cppless::graph::node_state::failed);
  EXPECT_THROW(late.future().get(), cppless::remote_error);
  try {
    builder.await_all();
    FAIL();
  } catch (const cppless::graph::graph_error& e) {
    ASSERT_EQ(e.failures().size(), 1u);
    EXPECT_EQ(e.failures()[0].node, late.id());
    EXPECT_EQ(e.failures()[0].cause, bad.id());
    EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos) << e.what();
  }
}

TEST(GraphFailure, AJoinFailsAsSoonAsOneInputFails) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto s = cppless::schedule(builder);
  auto slow = cppless::then(s, [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return 1;
  });
  auto bad = cppless::then(s, []() -> int { throw std::logic_error("early"); });
  auto j = cppless::then(cppless::when_all(slow, bad), [](int a, int b) { return a + b; }).future();
  EXPECT_THROW(j.get(), cppless::remote_error);
  EXPECT_FALSE(slow.future().ready());  // the failure did not wait for the slow branch
  EXPECT_THROW(builder.await_all(), cppless::graph::graph_error);
  EXPECT_EQ(slow.future().get(), 1);
}

TEST(GraphFailure, AWorkerCrashFailsItsNodeOnly) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto s = cppless::schedule(builder);
  auto crash = cppless::then(s, []() -> int { std::abort(); });
  auto fine = cppless::then(s, [] { return 1; });
  auto after = cppless::then(cppless::when_all(fine, crash), [](int a, int b) { return a + b; });
  auto fine2 = cppless::then(fine, [](int x) { return x + 1; }).future();
  try {
    builder.await_all();
    FAIL();
  } catch (const cppless::graph::graph_error& e) {
    EXPECT_EQ(e.failures().size(), 3u);  // crash, the join, after
    EXPECT_THROW(std::rethrow_exception(e.first_error()), cppless::worker_crashed);
  }
  EXPECT_EQ(fine2.get(), 2);
  EXPECT_THROW(after.future().get(), cppless::worker_crashed);
}

TEST(GraphFailure, ARefusedCallFailsItsNode) {
  cppless::local_options options;
  options.max_payload = 4096;
  cppless::local_dispatcher small(options);
  auto instance = small.create_instance();
  cppless::graph::builder builder(instance);
  // The result fits (results are bounded by max_payload too); the call consuming it with a
  // capture of its own does not.
  auto big = cppless::then(cppless::schedule(builder), [] { return std::vector<int>(900, 1); });
  auto consume = cppless::then(big, [pad = std::string(1000, 'p')](const std::vector<int>& v) { return v.size() + pad.size(); });
  auto next = cppless::then(consume, [](std::size_t n) { return n; });
  try {
    builder.await_all();
    FAIL();
  } catch (const cppless::graph::graph_error& e) {
    ASSERT_EQ(e.failures().size(), 2u);
    EXPECT_EQ(e.failures()[0].node, consume.id());
    EXPECT_THROW(std::rethrow_exception(e.first_error()), cppless::payload_too_large);
  }
  EXPECT_EQ(big.future().get().size(), 900u);
  EXPECT_THROW(next.future().get(), cppless::payload_too_large);
}

TEST(GraphFailure, ACallbackThatThrowsEndsTheAwaitAndTheGraphGoesOn) {
  auto instance = dispatcher().create_instance();
  cppless::graph::builder builder(instance);
  auto a = cppless::then(cppless::schedule(builder), [] { return 1; });
  a.future().on_ready([](cppless::graph::future<int>) { throw std::runtime_error("host callback"); });
  auto b = cppless::then(a, [](int x) { return x + 1; }).future();
  EXPECT_THROW(builder.await_all(), std::runtime_error);
  builder.await_all();
  EXPECT_EQ(b.get(), 2);
}

}  // namespace
