// Smart pointers through a real call on a local worker: two captures of one shared_ptr arrive as
// one object, a registered derived class keeps its class, an unregistered one fails at dispatch
// with its name.
#include <cppless/cppless.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace dispatch_shapes {
struct base {
  virtual ~base() = default;
  [[nodiscard]] virtual std::string name() const { return "base"; }
  int value = 0;
  template <class A>
  void serialize(A& ar) {
    ar(value);
  }
};
struct registered : base {
  [[nodiscard]] std::string name() const override { return "registered"; }
  template <class A>
  void serialize(A& ar) {
    base::serialize(ar);
  }
};
struct not_registered : base {
  [[nodiscard]] std::string name() const override { return "not_registered"; }
  template <class A>
  void serialize(A& ar) {
    base::serialize(ar);
  }
};
}  // namespace dispatch_shapes

CPPLESS_REGISTER_TYPE(dispatch_shapes::registered);

namespace {
cppless::instance make_instance(cppless::local_dispatcher& d) { return d.create_instance(); }
}  // namespace

TEST(PointerDispatch, TwoCapturesOfOneSharedPtrArriveAsOneObject) {
  cppless::local_options options;
  options.workers = 1;
  cppless::local_dispatcher dispatcher(options);
  auto instance = make_instance(dispatcher);
  auto shared = std::make_shared<dispatch_shapes::registered>();
  shared->value = 7;
  std::shared_ptr<dispatch_shapes::base> a = shared, b = shared;
  auto fn = [a, b](std::shared_ptr<dispatch_shapes::base> c) {
    // The worker's copies: one object, of the derived class, shared with the argument too.
    return a->name() + (a == b ? " same" : " different") + (a == c ? " same" : " different");
  };
  EXPECT_EQ(cppless::async(instance, fn, a).get(), "registered same same");
}

TEST(PointerDispatch, UnregisteredDerivedClassFailsAtDispatchNamingIt) {
  cppless::local_options options;
  options.workers = 1;
  cppless::local_dispatcher dispatcher(options);
  auto instance = make_instance(dispatcher);
  std::shared_ptr<dispatch_shapes::base> p = std::make_shared<dispatch_shapes::not_registered>();
  auto fn = [p] { return p->value; };
  try {
    (void)cppless::async(instance, fn);
    FAIL() << "dispatched";
  } catch (const cppless::error& e) {
    EXPECT_NE(std::string(e.what()).find("dispatch_shapes::not_registered"), std::string::npos) << e.what();
  }
}
