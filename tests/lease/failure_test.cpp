// The lease backend's failures: each ends every call exactly once with a typed error, and
// nothing hangs. Real processes are killed by pid (executors, managers, the resource manager, a
// client), real connections reset.
#include "cluster_fixture.hpp"
#include "net.hpp"
#include "token.hpp"

#include <cppless/cppless.hpp>
#include <cppless/lease.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <thread>

extern char** environ;

namespace {

using namespace std::chrono_literals;
using lease_test::cluster;
using lease_test::eventually;

int sleepy(int seconds) {
  std::this_thread::sleep_for(std::chrono::seconds(seconds));  // the workload: a long call
  return seconds;
}

// Runs `n` quick calls and checks every result.
void quick_calls_work(cppless::instance& instance, int n) {
  std::vector<int> out(n);
  for (int i = 0; i < n; ++i) cppless::dispatch(instance, [](int k) { return k * 3; }, out[i], i);
  cppless::wait(instance, n);
  for (int i = 0; i < n; ++i) EXPECT_EQ(out[i], 3 * i);
}

TEST(LeaseFailures, ExecutorCrashFailsOnlyItsCall) {
  cluster c;
  c.add_manager(2);
  auto instance = c.dispatcher().create_instance({.cores = 2, .duration = 60s});
  cppless::dispatch(instance, [] { ::kill(::getpid(), SIGKILL); });
  EXPECT_THROW(cppless::wait(instance, 1), cppless::worker_crashed);
  quick_calls_work(instance, 6);  // the other executor takes them
  int alive = 0;
  for (auto& e : instance.executors()) alive += e.alive;
  EXPECT_EQ(alive, 1);
}

TEST(LeaseFailures, ConnectionResetFailsTheCallTyped) {
  cluster c;
  c.add_manager(2);
  auto instance = c.dispatcher().create_instance({.cores = 2, .duration = 60s});
  int ignored = 0;
  // The executor's end of the connection is reset (SO_LINGER 0, close: an RST goes out).
  cppless::dispatch(instance, [] {
    linger l{1, 0};
    ::setsockopt(3, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    ::close(3);
    return 1;
  }, ignored);
  EXPECT_THROW(cppless::wait(instance, 1), cppless::worker_crashed);
  quick_calls_work(instance, 4);
}

TEST(LeaseFailures, ExecutorManagerCrashEndsItsCallsAndTheOthersGoOn) {
  cluster c;
  auto& m1 = c.add_manager(1);
  c.add_manager(1);
  auto instance = c.dispatcher().create_instance({.cores = 2, .duration = 60s});
  // The first call goes to the first executor; find its manager's process.
  int slept = 0;
  cppless::dispatch(instance, [] { return sleepy(30); }, slept);
  const auto first = instance.executors().at(0);
  auto& victim = first.address == m1.address ? m1 : c.managers().at(1);
  c.stop(victim, SIGKILL);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(cppless::wait(instance, 1), cppless::worker_crashed);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s);
  quick_calls_work(instance, 4);
}

TEST(LeaseFailures, ResourceManagerDownAfterTheGrantCallsContinue) {
  cluster c;
  c.add_manager(2);
  auto instance = c.dispatcher().create_instance({.cores = 2, .duration = 60s});
  c.stop(c.resource_manager(), SIGKILL);
  quick_calls_work(instance, 20);
  // Usage is read from the managers themselves.
  EXPECT_EQ(instance.usage().calls, 20u);
  // A new lease cannot be had, with an error that says why.
  EXPECT_THROW(c.dispatcher().create_instance({.cores = 1}), cppless::error);
}

TEST(LeaseFailures, LeaseExpiringDuringACallEndsItWithLeaseExpired) {
  cluster c;
  c.add_manager(1);
  auto instance = c.dispatcher().create_instance({.cores = 1, .duration = 1500ms});
  int ignored = 0;
  cppless::dispatch(instance, [] { return sleepy(20); }, ignored);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(cppless::wait(instance, 1), cppless::lease_expired);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  cppless::dispatch(instance, [] { return 1; }, ignored);
  EXPECT_THROW(cppless::wait(instance, 1), cppless::lease_expired);
  // Its executor was stopped by its manager.
  EXPECT_TRUE(eventually([&] { return cluster::children_of(c.managers()[0].pid).empty(); }));
}

TEST(LeaseFailures, CallsAfterReleaseEndInLeaseError) {
  cluster c;
  c.add_manager(1);
  auto instance = c.dispatcher().create_instance({.cores = 1, .duration = 60s});
  const auto manager = c.managers()[0].pid;
  EXPECT_EQ(cluster::children_of(manager).size(), 1u);
  instance.release();
  EXPECT_EQ(instance.state(), "released");
  int out = 0;
  for (int i = 0; i < 3; ++i) cppless::dispatch(instance, [] { return 1; }, out);
  for (int i = 0; i < 3; ++i) EXPECT_THROW(instance.wait_one(), cppless::lease_error);
  EXPECT_EQ(instance.pending(), 0u);
  EXPECT_TRUE(eventually([&] { return cluster::children_of(manager).empty(); }));
}

TEST(LeaseFailures, WrongSecretOrUnknownUserIsRefused) {
  cluster c;
  c.add_manager(1);
  auto options = c.client();
  options.secret = "not-alices-secret-at-all";
  EXPECT_THROW(cppless::lease_dispatcher(options).create_instance({}), cppless::lease_refused);
  options = c.client("mallory");
  options.secret = "mallory-secret-0123456789";
  EXPECT_THROW(cppless::lease_dispatcher(options).create_instance({}), cppless::lease_refused);
}

// Asks an executor manager directly for an executor with `token`; returns its answer.
nlohmann::json ask_manager(const std::string& address, const cppless::lease::lease_token& token) {
  namespace net = cppless::lease::net;
  auto fd = net::connect_to(net::parse_address(address), 5s);
  net::send_message(fd.get(),
                    {{"type", "executor"}, {"token", token.to_json()},
                     {"executable", {{"sha256", std::string(64, 'a')}, {"size", 1000}}}},
                    net::after(5s));
  return net::receive_message(fd.get(), net::after(5s));
}

TEST(LeaseFailures, ForgedExpiredOrForeignTokensAreRefusedBeforeCodeIsShipped) {
  cluster c;
  auto& m = c.add_manager(1);
  // A real grant gives us the manager's id and a valid token to tamper with.
  std::string manager;
  cppless::lease::lease_token good;
  {
    auto instance = c.dispatcher().create_instance({.cores = 1, .duration = 60s});
    manager = instance.executors().at(0).manager;
  }
  good = {"L99-x", "alice", manager, cppless::lease::unix_ms() + 60'000, 1, 256, "hot", {}};
  good.sign(c.cluster_key());
  const auto cache = c.dir() + "/cache-0";
  const auto files_before = std::distance(std::filesystem::directory_iterator(cache), {});

  auto forged = good;
  forged.cores = 64;  // stretched after signing
  auto reply = ask_manager(m.address, forged);
  EXPECT_FALSE(reply.value("ok", true));
  EXPECT_NE(reply.value("error", "").find("signature"), std::string::npos) << reply.dump();

  auto self_signed = good;
  self_signed.sign("a-key-the-user-made-up-1234");
  EXPECT_FALSE(ask_manager(m.address, self_signed).value("ok", true));

  auto expired = good;
  expired.expires_ms = cppless::lease::unix_ms() - 1000;
  expired.sign(c.cluster_key());
  reply = ask_manager(m.address, expired);
  EXPECT_NE(reply.value("error", "").find("expired"), std::string::npos) << reply.dump();

  auto foreign = good;
  foreign.manager = "m7-elsewhere";
  foreign.sign(c.cluster_key());
  reply = ask_manager(m.address, foreign);
  EXPECT_NE(reply.value("error", "").find("not this one"), std::string::npos) << reply.dump();

  // None of them got as far as an upload: nothing new in the manager's cache.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(cache), {}), files_before);
}

TEST(LeaseFailures, MemoryBeyondTheLeaseIsRefusedToTheFunction) {
#if CPPLESS_LEASE_TEST_SANITIZED
  GTEST_SKIP() << "a sanitizer's shadow memory does not fit an address-space limit";
#endif
  cluster c;
  c.add_manager(1);
  auto instance = c.dispatcher().create_instance({.cores = 1, .memory_mb = 256, .duration = 60s});
  auto touch = [](std::size_t mb) {
    std::vector<char> block(mb << 20, 1);
    return static_cast<int>(block[block.size() / 2]);
  };
  int ok = 0;
  cppless::dispatch(instance, touch, ok, std::size_t{32});
  cppless::wait(instance, 1);
  EXPECT_EQ(ok, 1);
  cppless::dispatch(instance, touch, ok, std::size_t{1024});
  // rlimit: the allocation fails inside the function; cgroup: the kernel kills the executor.
  try {
    cppless::wait(instance, 1);
    FAIL() << "1 GB fitted into a 256 MB lease";
  } catch (const cppless::remote_error& e) {
    EXPECT_NE(e.remote_type().find("bad_alloc"), std::string::npos) << e.what();
  } catch (const cppless::worker_crashed&) {
  }
}

TEST(LeaseFailures, SilentManagerIsDroppedAndItsLeaseReportedLost) {
  cluster c(100);
  auto& m = c.add_manager(1);
  auto instance = c.dispatcher().create_instance({.cores = 1, .duration = 60s});
  EXPECT_EQ(instance.state(), "active");
  ::kill(m.pid, SIGSTOP);
  EXPECT_TRUE(eventually([&] { return instance.state() == "lost"; }));
  ::kill(m.pid, SIGCONT);
}

// Helper mode of this test binary (started by the next test): hold a lease with one long call,
// say so, and wait to be killed.
TEST(LeaseHelper, HoldLeaseUntilKilled) {
  const char* rm = std::getenv("LEASE_TEST_HOLD_RM");
  if (!rm) GTEST_SKIP() << "helper of LeaseFailures.KilledClientsExecutorsAreReclaimed";
  cppless::lease_options o;
  o.resource_manager = rm;
  o.user = "alice";
  o.secret = std::getenv("LEASE_TEST_HOLD_SECRET");
  auto instance = cppless::lease_dispatcher(o).create_instance({.cores = 2, .duration = 60s});
  int ignored = 0;
  cppless::dispatch(instance, [] { return sleepy(60); }, ignored);
  std::printf("holding\n");
  std::fflush(stdout);
  cppless::wait(instance, 1);
}

TEST(LeaseFailures, KilledClientsExecutorsAreReclaimed) {
  cluster c;
  auto& m = c.add_manager(2);
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = 0;
  std::string filter = "--gtest_filter=LeaseHelper.HoldLeaseUntilKilled";
  char* argv[] = {self, filter.data(), nullptr};
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) env_s.push_back(*e);
  env_s.push_back("LEASE_TEST_HOLD_RM=tcp://" + c.resource_manager().address);
  env_s.push_back("LEASE_TEST_HOLD_SECRET=" + c.secret_of("alice"));
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t client = -1;
  ASSERT_EQ(::posix_spawn(&client, self, &fa, nullptr, argv, envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  // Wait for its "holding" line.
  std::string text;
  const auto until = std::chrono::steady_clock::now() + 30s;
  while (text.find("holding") == std::string::npos && std::chrono::steady_clock::now() < until) {
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    char buf[256];
    const ssize_t got = ::read(out[0], buf, sizeof buf);
    if (got <= 0) break;
    text.append(buf, static_cast<std::size_t>(got));
  }
  ::close(out[0]);
  ASSERT_NE(text.find("holding"), std::string::npos) << text;
  EXPECT_EQ(cluster::children_of(m.pid).size(), 2u);
  ::kill(client, SIGKILL);
  ::waitpid(client, nullptr, 0);
  // Both executors, the busy one included, are stopped soon after the client is gone.
  EXPECT_TRUE(eventually([&] { return cluster::children_of(m.pid).empty(); }, 10s));
}

}  // namespace
