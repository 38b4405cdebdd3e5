// Lease tokens and secrets files, without any server.
#include "token.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

using cppless::lease::lease_token;

lease_token sample(std::int64_t expires_ms) {
  lease_token t{"L1-abc", "alice", "m1-abc", expires_ms, 2, 512, "hot", {}};
  t.sign("cluster-key-0123456789");
  return t;
}

TEST(LeaseToken, ValidForItsManagerUntilItExpires) {
  const auto t = sample(1'000'000);
  EXPECT_EQ(t.problem("cluster-key-0123456789", "m1-abc", 999'999), "");
  EXPECT_NE(t.problem("cluster-key-0123456789", "m1-abc", 1'000'000).find("expired"), std::string::npos);
  EXPECT_NE(t.problem("cluster-key-0123456789", "m2-abc", 5).find("not 'm2-abc'"), std::string::npos);
}

TEST(LeaseToken, AnyChangedFieldOrKeyBreaksTheSignature) {
  const auto good = sample(1'000'000);
  auto check = [&](lease_token t) { EXPECT_NE(t.problem("cluster-key-0123456789", t.manager, 5).find("signature"), std::string::npos); };
  auto t = good; t.expires_ms += 1; check(t);
  t = good; t.cores = 3; check(t);
  t = good; t.memory_mb = 4096; check(t);
  t = good; t.user = "bob"; check(t);
  t = good; t.lease = "L2-abc"; check(t);
  t = good; t.mode = "warm"; check(t);
  t = good; t.mac[0] = t.mac[0] == '0' ? '1' : '0'; check(t);
  EXPECT_NE(good.problem("another-key-0123456789", good.manager, 5).find("signature"), std::string::npos);
}

TEST(LeaseToken, JsonRoundTripAndMissingFields) {
  const auto t = sample(42);
  const auto back = lease_token::from_json(t.to_json());
  EXPECT_EQ(back.signed_text(), t.signed_text());
  EXPECT_EQ(back.mac, t.mac);
  auto j = t.to_json();
  j.erase("mac");
  EXPECT_ANY_THROW(lease_token::from_json(j));
}

TEST(LeaseSecrets, FileIsParsedAndCheckedForPermissionsAndShortSecrets) {
  char path[] = "/tmp/cppless-secrets-test.XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  auto write = [&](const std::string& text, mode_t mode) {
    std::ofstream(path) << text;
    ::chmod(path, mode);
  };
  write("# comment\n@managers cluster-key-0123456789\nalice alice-secret-0123456789\n", 0600);
  auto s = cppless::lease::secrets::load(path);
  EXPECT_EQ(s.cluster_key, "cluster-key-0123456789");
  EXPECT_EQ(s.users.at("alice"), "alice-secret-0123456789");
  write("@managers cluster-key-0123456789\n", 0644);
  EXPECT_THROW(cppless::lease::secrets::load(path), std::runtime_error);
  write("@managers short\n", 0600);
  EXPECT_THROW(cppless::lease::secrets::load(path), std::runtime_error);
  write("alice alice-secret-0123456789\n", 0600);
  EXPECT_THROW(cppless::lease::secrets::load(path), std::runtime_error);  // no cluster key
  write("alice alice-secret-0123456789 extra\n@managers cluster-key-0123456789\n", 0600);
  EXPECT_THROW(cppless::lease::secrets::load(path), std::runtime_error);
  ::close(fd);
  std::remove(path);
}

TEST(LeaseHmac, MatchesAKnownVector) {
  // RFC 4231 test case 2.
  EXPECT_EQ(cppless::lease::hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

}  // namespace
