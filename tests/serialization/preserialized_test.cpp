// cppless::preserialized<T>: encoded once on the host; a warm worker decodes one content once and
// reuses it for the following calls; a corrupt content is refused.
#include <cppless/cppless.hpp>
#include <cppless/preserialized.hpp>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

using namespace cppless;

namespace {
using table = std::map<std::string, std::vector<int>>;

table make_table(int n) {
  table t;
  for (int i = 0; i < n; ++i) t["k" + std::to_string(i)] = std::vector<int>(100, i);
  return t;
}
}  // namespace

TEST(Preserialized, RoundTripThroughAnArchive) {
  const preserialized<table> p(make_table(10));
  EXPECT_GT(p.encoded_size(), 4000u);
  const byte_buffer bytes = to_bytes(p);
  preserialized<table> back;
  from_bytes(bytes.span(), back);
  EXPECT_EQ(back.get(), p.get());
  EXPECT_EQ(back.hash(), p.hash());
  // The same content again: taken from the cache, not decoded a second time.
  const std::size_t before = preserialized<table>::decodes();
  preserialized<table> again;
  from_bytes(bytes.span(), again);
  EXPECT_EQ(preserialized<table>::decodes(), before);
  EXPECT_EQ(&again.get(), &back.get());
}

TEST(Preserialized, CorruptContentIsRefused) {
  const preserialized<table> p(make_table(3));
  byte_buffer bytes = to_bytes(p);
  bytes.data()[bytes.size() - 1] ^= std::byte{1};  // a changed value, hash unchanged
  preserialized<table> back;
  EXPECT_THROW(from_bytes(bytes.span(), back), decode_error);
  EXPECT_THROW((void)back.get(), error);
}

TEST(Preserialized, AWarmWorkerDecodesOnce) {
  local_options options;
  options.workers = 1;
  local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();
  const preserialized<table> p(make_table(50));
  auto fn = [p](int i) {
    return static_cast<long>(p.get().at("k" + std::to_string(i)).front()) * 1000 +
           static_cast<long>(preserialized<table>::decodes());
  };
  std::vector<long> out(6);
  for (int i = 0; i < 6; ++i) dispatch(instance, fn, out[static_cast<std::size_t>(i)], i);
  wait(instance, 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[static_cast<std::size_t>(i)], i * 1000 + 1) << "call " << i;
}
