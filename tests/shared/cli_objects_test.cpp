// `cppless obj ...` from shell scripts (Crucial's serverless-shell example, with the workers as
// concurrent shell processes): counting the words of several files with a stateless script (each
// worker prints its count, the driver sums) and a stateful one (each worker adds to a shared
// counter) gives the same answer; a pipeline `a | b` whose stages are separate processes is
// carried through a shared queue; a rendezvous hands every party all values.
#include <cppless/testing/local_redis.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace {

// Runs a shell command with CPPLESS_REDIS set; returns its standard output (fails on exit != 0).
std::string sh(const cppless::testing::local_redis& redis, const std::string& command) {
  const std::string full = "CPPLESS_REDIS=" + redis.url() + " CPPLESS_REDIS_NAMESPACE=cli-test CPPLESS=" + CPPLESS_CLI +
                           " sh -c '" + command + "'";
  FILE* p = ::popen(full.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("popen failed");
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  EXPECT_EQ(status, 0) << command << "\n" << out;
  return out;
}

class cli_objects : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cppless-cli-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    for (int f = 0; f < 4; ++f) {
      std::ofstream out(dir_ / ("part" + std::to_string(f) + ".txt"));
      for (int line = 0; line < 10 + f * 7; ++line) out << "word" << line << " and some more words " << f << "\n";
    }
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
  cppless::testing::local_redis redis_;
};

}  // namespace

TEST_F(cli_objects, StatelessAndStatefulCountsAgree) {
  const std::string files = (dir_ / "part").string();
  // Stateless: each worker prints its count; the driver adds them up.
  const std::string stateless = sh(redis_, "for f in 0 1 2 3; do (wc -w < " + files + "$f.txt) & done; wait");
  long long sum = 0;
  std::istringstream in(stateless);
  for (long long n; in >> n;) sum += n;
  // Stateful: each worker adds its count to a shared counter; the answer is the counter.
  sh(redis_, "for f in 0 1 2 3; do ($CPPLESS obj counter words add $(wc -w < " + files + "$f.txt) > /dev/null) & done; wait");
  const std::string stateful = sh(redis_, "$CPPLESS obj counter words get");
  EXPECT_GT(sum, 0);
  EXPECT_EQ(std::stoll(stateful), sum);
}

TEST_F(cli_objects, TheServerlessShellCountsTheSameBothWays) {
  // The same two scripts, each file's part run by `cppless sh` on a worker of its own.
  const std::string files = (dir_ / "part").string();
  // In the driver's shell $f and $CPPLESS expand; \$(...) reaches the worker's shell as $(...).
  const std::string stateless =
      sh(redis_, R"(for f in 0 1 2 3; do ($CPPLESS sh "wc -w < )" + files + R"($f.txt" 2>/dev/null) & done; wait)");
  long long sum = 0;
  std::istringstream in(stateless);
  for (long long n; in >> n;) sum += n;
  sh(redis_, R"(for f in 0 1 2 3; do ($CPPLESS sh "$CPPLESS obj counter shell-words add \$(wc -w < )" + files +
                 R"($f.txt) > /dev/null" 2>/dev/null) & done; wait)");
  EXPECT_GT(sum, 0);
  EXPECT_EQ(std::stoll(sh(redis_, "$CPPLESS obj counter shell-words get")), sum);
  // Crucial's report line, and the command's exit status passed on.
  EXPECT_NE(sh(redis_, R"($CPPLESS sh "echo on a worker" 2>&1)").find("RequestId: "), std::string::npos);
  EXPECT_EQ(std::system((std::string(CPPLESS_CLI) + R"( sh "exit 3" 2>/dev/null)").c_str()) >> 8, 3);
}

TEST_F(cli_objects, PipelineStagesMeetThroughAQueue) {
  const std::string file = (dir_ / "part3.txt").string();
  // `cat file | wc -l`, the two stages in separate processes started at once.
  const std::string out =
      sh(redis_, "($CPPLESS obj queue lines drain --timeout-ms 20000 | wc -l) & (cat " + file +
                     " | $CPPLESS obj queue lines push && $CPPLESS obj queue lines end); wait");
  EXPECT_EQ(std::stoll(out), 10 + 3 * 7);
}

TEST_F(cli_objects, RendezvousGivesEveryPartyEveryValue) {
  const std::string out = (dir_ / "party").string();
  sh(redis_, "for i in 1 2 3; do ($CPPLESS obj rendezvous meet join --parties 3 --value party$i | sort > " + out + "$i) & done; wait");
  for (int i = 1; i <= 3; ++i) {
    std::ifstream in(out + std::to_string(i));
    std::stringstream got;
    got << in.rdbuf();
    EXPECT_EQ(got.str(), "party1\nparty2\nparty3\n") << "party " << i;
  }
}

TEST_F(cli_objects, BadInputIsAClearError) {
  EXPECT_NE(std::system(("CPPLESS_REDIS=" + redis_.url() + " " + CPPLESS_CLI + " obj counter c add notanumber 2>/dev/null").c_str()), 0);
  EXPECT_NE(std::system(("CPPLESS_REDIS=" + redis_.url() + " " + CPPLESS_CLI + " obj barrier b await 2>/dev/null").c_str()), 0);
  EXPECT_NE(std::system(("CPPLESS_REDIS=redis://127.0.0.1:1 " + std::string(CPPLESS_CLI) + " obj counter c get 2>/dev/null").c_str()), 0);
}
