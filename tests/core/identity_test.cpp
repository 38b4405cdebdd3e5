// Function identity: distinct callables get distinct ids; ids do not depend on directories.
#include <cppless/dispatch.hpp>
#include <cppless/entry.hpp>

#include <gtest/gtest.h>

namespace {

template <class Config, class F, class... Args>
const cppless::entry& entry_of(const F&) {
  return cppless::detail::function_entry<Config, F, Args...>::get();
}

template <class T>
auto make_lambda() {
  return [](T x) { return x; };
}

TEST(Identity, DistinctLambdasHaveDistinctIds) {
  auto a = [] { return 1; };
  auto b = [] { return 1; };
  const auto& ea = entry_of<cppless::default_config>(a);
  const auto& eb = entry_of<cppless::default_config>(b);
  EXPECT_NE(ea.id, eb.id);
  EXPECT_NE(ea.id_hash, eb.id_hash);
  EXPECT_NE(ea.name.find("identity_test.cpp"), std::string::npos) << ea.name;
}

TEST(Identity, TemplateInstancesAreDistinct) {
  auto fi = make_lambda<int>();
  auto fd = make_lambda<double>();
  const auto& ei = entry_of<cppless::default_config, decltype(fi), int>(fi);
  const auto& ed = entry_of<cppless::default_config, decltype(fd), double>(fd);
  EXPECT_EQ(ei.name, ed.name);  // same source location...
  EXPECT_NE(ei.id_hash, ed.id_hash);  // ...different functions
}

TEST(Identity, ConfigIsPartOfTheId) {
  auto f = [] { return 1; };
  const auto& small = entry_of<cppless::config<cppless::with_memory<256>>>(f);
  const auto& large = entry_of<cppless::config<cppless::with_memory<2048>>>(f);
  EXPECT_NE(small.id_hash, large.id_hash);
  EXPECT_EQ(small.config.memory_mb, 256u);
  EXPECT_EQ(large.config.memory_mb, 2048u);
  EXPECT_EQ(small.fingerprint, large.fingerprint);
}

TEST(Identity, ArgumentTypesChangeTheFingerprint) {
  auto generic = [](auto x) { return x; };
  const auto& ei = entry_of<cppless::default_config, decltype(generic), int>(generic);
  const auto& el = entry_of<cppless::default_config, decltype(generic), long>(generic);
  EXPECT_NE(ei.id_hash, el.id_hash);
  EXPECT_NE(ei.fingerprint, el.fingerprint);
}

TEST(Identity, AbsoluteDirectoriesAreCut) {
  EXPECT_EQ(cppless::readable_type_name("auto f() [T = (lambda at /home/me/build-a/src/main.cpp:12:5)]"),
            "(lambda at main.cpp:12:5)");
  EXPECT_EQ(cppless::readable_type_name("auto f() [T = (lambda at src/main.cpp:12:5)]"), "(lambda at src/main.cpp:12:5)");
  EXPECT_EQ(cppless::readable_type_name("const char* f() [with T = main()::<lambda()>; std::string_view = x]"),
            "main()::<lambda()>");
}

TEST(Identity, ManifestListsEntries) {
  auto f = [] { return 3; };
  const auto& e = entry_of<cppless::config<cppless::with_timeout<7>>>(f);
  const std::string json = cppless::registry::global().manifest_json();
  EXPECT_NE(json.find("\"entry_points\""), std::string::npos);
  EXPECT_NE(json.find("\"timeout\":7"), std::string::npos);
  EXPECT_NE(cppless::registry::global().find(e.id_hash), nullptr);
}

}  // namespace
