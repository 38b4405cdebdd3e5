// Faults: lost replies (a proxy that drops them), killed connections, a server that is down or
// restarted, wrong passwords and ACLs. Calls retried after a lost reply must apply once.
#include "redis_fixture.hpp"

#include <cppless/archive.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

using namespace std::chrono_literals;
namespace sh = cppless::shared;
using sh::testing::admin;
using sh::testing::in_processes;
using sh::testing::server;
using sh::testing::shared_test;

namespace {

// A TCP proxy in front of the server that can drop the connection instead of forwarding the
// next reply: the command ran on the server, the client never hears of it.
class lossy_proxy {
 public:
  explicit lossy_proxy(int target) : target_(target) {
    listen_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_, 16) != 0 ||
        ::getsockname(listen_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("proxy: cannot listen");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~lossy_proxy() {
    stop_ = true;
    thread_.join();
    ::close(listen_);
  }
  [[nodiscard]] std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  void drop_next_reply() { drop_reply_after(0); }
  // Forwards `skip` replies, then drops the connection instead of forwarding the next one.
  void drop_reply_after(int skip) { countdown_ = skip; }
  [[nodiscard]] int accepted() const { return accepted_; }
  [[nodiscard]] int dropped() const { return dropped_; }

 private:
  struct pair {
    int client, server;
  };
  static int connect_to(int port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      return -1;
    }
    return fd;
  }
  void run() {
    std::vector<pair> pairs;
    while (!stop_) {
      std::vector<pollfd> fds{{listen_, POLLIN, 0}};
      for (auto& p : pairs) {
        fds.push_back({p.client, POLLIN, 0});
        fds.push_back({p.server, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
      const std::size_t polled = pairs.size();  // a pair accepted below waits for the next round
      if (fds[0].revents & POLLIN) {
        int c = ::accept(listen_, nullptr, nullptr);
        int s = connect_to(target_);
        if (c >= 0 && s >= 0) {
          pairs.push_back({c, s});
          ++accepted_;
        } else {
          if (c >= 0) ::close(c);
          if (s >= 0) ::close(s);
        }
      }
      std::vector<pair> keep(pairs.begin() + static_cast<std::ptrdiff_t>(polled), pairs.end());
      for (std::size_t i = 0; i < polled; ++i) {
        auto& p = pairs[i];
        bool alive = true;
        char buf[65536];
        if (fds[1 + 2 * i].revents) {
          ssize_t n = ::read(p.client, buf, sizeof buf);
          alive = n > 0 && ::send(p.server, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) == n;
        }
        if (alive && fds[2 + 2 * i].revents) {
          ssize_t n = ::read(p.server, buf, sizeof buf);
          const int left = countdown_.load();
          if (n > 0 && left > 0) countdown_ = left - 1;
          if (n > 0 && left == 0) {
            countdown_ = -1;
            ++dropped_;
            alive = false;  // the reply is lost with the connection
          } else {
            alive = n > 0 && ::send(p.client, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) == n;
          }
        }
        if (alive) {
          keep.push_back(p);
        } else {
          ::close(p.client);
          ::close(p.server);
        }
      }
      pairs = std::move(keep);
    }
    for (auto& p : pairs) {
      ::close(p.client);
      ::close(p.server);
    }
  }

  int target_, listen_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> countdown_{-1};  // replies to forward before dropping one; -1: none
  std::atomic<int> accepted_{0}, dropped_{0};
  std::thread thread_;
};

}  // namespace

TEST_F(shared_test, CallsRetriedAfterALostReplyApplyOnce) {
  lossy_proxy proxy(server().port());
  auto via = sh::store::connect(proxy.url(), store_.ns());  // same namespace, through the proxy
  auto c = via.counter("c");
  auto q = via.queue<int>("q");
  auto b = via.best<int, std::string>("b", sh::maximize);
  auto f = via.write_once<int>("f");
  auto m = via.map<int, std::int64_t>("m");
  auto a = via.atomic<int>("a", 0);
  auto bar = via.barrier("bar", 1);
  auto sem = via.semaphore("sem", 1);
  // Load every script into the server first, so the dropped reply is the operation's own.
  c.add(0);
  q.push(0);
  (void)q.try_pop();
  b.offer(0, "zero");
  m.merge(1, 0, sh::merge_op::add);
  int zero = 0;
  a.compare_exchange(zero, 0);
  bar.arrive_and_wait();
  sem.release(1);
  (void)sem.try_acquire();

  const int before = proxy.dropped();
  proxy.drop_next_reply();
  EXPECT_EQ(c.add(5), 5);  // the retry returns the first attempt's result
  proxy.drop_next_reply();
  EXPECT_EQ(q.push(7), 1);
  proxy.drop_next_reply();
  EXPECT_EQ(q.pop(1s), 7);
  proxy.drop_next_reply();
  EXPECT_TRUE(b.offer(10, "ten"));  // improved once, and says so on the retry too
  proxy.drop_next_reply();
  EXPECT_NO_THROW(f.set(1));  // not "already set": the retry is recognised
  proxy.drop_next_reply();
  EXPECT_EQ(m.merge(1, 3, sh::merge_op::add), 3);
  proxy.drop_next_reply();
  int expected = 0;
  EXPECT_TRUE(a.compare_exchange(expected, 1));
  proxy.drop_next_reply();
  EXPECT_EQ(bar.arrive_and_wait(), 1);
  proxy.drop_next_reply();
  EXPECT_TRUE(sem.try_acquire());
  EXPECT_EQ(proxy.dropped() - before, 9);

  // Checked directly against the server, not through the proxy.
  EXPECT_EQ(store_.counter("c").get(), 5);
  EXPECT_EQ(store_.queue<int>("q").size(), 0);
  EXPECT_EQ((store_.best<int, std::string>("b", sh::maximize).payload()), "ten");
  EXPECT_EQ((store_.map<int, std::int64_t>("m").get(1)), 3);
  EXPECT_EQ(store_.atomic<int>("a").load(), 1);
  EXPECT_EQ(store_.semaphore("sem", 1).available(), 0);
  EXPECT_THROW(f.set(2), sh::already_set);  // a genuinely second set still fails
}

TEST_F(shared_test, EveryChangingCallSurvivesALostReply) {
  lossy_proxy proxy(server().port());
  auto via = sh::store::connect(proxy.url(), store_.ns());
  auto c = via.counter("c");
  auto a = via.atomic<std::string>("a", "start");
  auto m = via.map<std::string, int>("m");
  auto gate = via.latch("gate", 2);
  auto sem = via.semaphore("sem", 1);
  auto timed = via.latch("timed", 1);
  // Load every script first, so each dropped reply is the operation's own.
  c.reset(0);
  a.store("start");
  (void)a.exchange("start");
  m.put("k", 0);
  m.erase("k");
  sem.release(1);
  ASSERT_TRUE(sem.try_acquire(2));  // none left
  EXPECT_THROW(timed.wait(1ms), sh::wait_timeout);  // register and withdraw
  gate.count_down(0);

  const int before = proxy.dropped();
  auto dropped = [&] { return proxy.dropped() - before; };
  proxy.drop_next_reply();
  EXPECT_EQ(c.reset(10), 0);  // the retry answers with the first attempt's previous value, not 10
  proxy.drop_next_reply();
  a.store("stored");
  proxy.drop_next_reply();
  EXPECT_EQ(a.exchange("exchanged"), "stored");
  proxy.drop_next_reply();
  EXPECT_TRUE(m.put("k", 1));  // new, and says so on the retry too
  proxy.drop_next_reply();
  EXPECT_FALSE(m.put("k", 2));
  proxy.drop_next_reply();
  EXPECT_TRUE(m.erase("k"));
  proxy.drop_next_reply();
  EXPECT_EQ(sem.release(2), 2);
  proxy.drop_next_reply();
  EXPECT_EQ(gate.count_down(), 1);
  EXPECT_EQ(dropped(), 8);
  // A waiter's registration (the first reply of wait) and its withdrawal (after the register
  // reply and the timed-out BLPOP's).
  proxy.drop_reply_after(2);
  EXPECT_THROW(timed.wait(50ms), sh::wait_timeout);
  EXPECT_EQ(dropped(), 9);
  std::thread waiter([&] { gate.wait(10s); });
  proxy.drop_next_reply();
  ASSERT_TRUE(sh::testing::eventually([&] { return dropped() == 10 && admin(server(), {"SCARD", gate.ref().sub_key("ws")}) == "1"; }));
  store_.latch("gate", 2).count_down();  // not through the proxy
  waiter.join();

  // Checked directly against the server.
  EXPECT_EQ(store_.counter("c").get(), 10);
  EXPECT_EQ(store_.atomic<std::string>("a").load(), "exchanged");
  EXPECT_EQ((store_.map<std::string, int>("m").size()), 0);
  EXPECT_EQ(store_.semaphore("sem", 0).available(), 2);
  EXPECT_EQ(store_.latch("gate", 0).count(), 0);
  EXPECT_EQ(store_.latch("timed", 0).count(), 1);
  EXPECT_EQ(admin(server(), {"EXISTS", timed.ref().sub_key("ws")}), "0");  // withdrawn once
}

TEST_F(shared_test, ListAndByteArrayChangesSurviveALostReply) {
  lossy_proxy proxy(server().port());
  auto via = sh::store::connect(proxy.url(), store_.ns());
  auto l = via.list<int>("l");
  auto bytes = via.byte_array("b", 4);
  l.push_back(0);  // load the scripts first
  (void)l.pop_back();
  l.push_front(0);
  l.set(0, 0);
  (void)l.pop_front();
  bytes.set(0, 0);
  bytes.add(0, 0);
  std::uint8_t zero = 0;
  bytes.compare_exchange(0, zero, 0);
  const int before = proxy.dropped();
  proxy.drop_next_reply();
  EXPECT_EQ(l.push_back(1), 1);
  proxy.drop_next_reply();
  EXPECT_EQ(l.push_front(2), 2);
  proxy.drop_next_reply();
  l.set(0, 3);
  proxy.drop_next_reply();
  EXPECT_EQ(l.pop_back(), 1);
  proxy.drop_next_reply();
  EXPECT_EQ(bytes.add(1, 5), 5);
  proxy.drop_next_reply();
  EXPECT_EQ(bytes.set(1, 7), 5);
  std::uint8_t seven = 7;
  proxy.drop_next_reply();
  EXPECT_TRUE(bytes.compare_exchange(1, seven, 8));
  EXPECT_EQ(proxy.dropped() - before, 7);
  EXPECT_EQ(store_.list<int>("l").range(), (std::vector<int>{3}));
  EXPECT_EQ(store_.byte_array("b", 4).snapshot(), (std::vector<std::uint8_t>{0, 8, 0, 0}));
}

TEST_F(shared_test, UserOperationSurvivesALostReply) {
  store_.define(sh::object_type{"tally", {{"bump", "return redis.call('HINCRBY', K, 'n', tonumber(ARGS[1]))"}}});
  lossy_proxy proxy(server().port());
  auto via = sh::store::connect(proxy.url(), store_.ns());
  auto t = via.custom("tally", "t");
  EXPECT_EQ(t.call<std::int64_t>("bump", 1), 1);
  const int before = proxy.dropped();
  proxy.drop_next_reply();
  EXPECT_EQ(t.call<std::int64_t>("bump", 10), 11);  // the recorded result, not 21
  EXPECT_EQ(proxy.dropped() - before, 1);
  EXPECT_EQ(store_.custom("tally", "t").call<std::int64_t>("bump", 0), 11);
}

TEST_F(shared_test, ReconnectsAfterClientKill) {
  auto c = store_.counter("c");
  c.add(1);
  EXPECT_NE(admin(server(), {"CLIENT", "KILL", "TYPE", "normal"}), "0");
  EXPECT_EQ(c.add(1), 2);
  EXPECT_EQ(c.get(), 2);
}

TEST_F(shared_test, KillStormKeepsEveryObjectExact) {
  // Connections are killed every few milliseconds while processes add, CAS and pass barriers.
  constexpr int procs = 3, ops = 300, gens = 15;
  auto c = store_.counter("c");
  auto a = store_.atomic<std::int64_t>("a", 0);
  auto bar = store_.barrier("bar", procs);
  std::atomic<bool> stop{false};
  std::atomic<int> kills{0};
  std::thread killer([&] {
    while (!stop) {
      kills += std::stoi(admin(server(), {"CLIENT", "KILL", "TYPE", "normal"}));
      std::this_thread::sleep_for(3ms);
    }
  });
  in_processes(procs, [&](int) {
    for (int i = 0; i < ops; ++i) {
      c.add(1);
      std::int64_t cur = a.load();
      while (!a.compare_exchange(cur, cur + 1)) {
      }
    }
    for (int g = 0; g < gens; ++g)
      if (bar.arrive_and_wait(20s) != g) throw std::runtime_error("wrong generation");
    return std::string();
  });
  stop = true;
  killer.join();
  EXPECT_GT(kills.load(), 0);
  EXPECT_EQ(c.get(), procs * ops);
  EXPECT_EQ(a.load(), procs * ops);
}

TEST_F(shared_test, BlockedWaitersSurviveClientKill) {
  auto f = store_.write_once<int>("f");
  auto q = store_.queue<int>("q");
  auto bar = store_.barrier("bar", 2);
  const int base = sh::testing::blocked_clients(server());
  std::thread helper([&] {
    // Once all three are blocked (BLPOP, BLMOVE, BLPOP), their connections are killed; they must
    // reconnect and block again before the events come.
    if (!sh::testing::eventually([&] { return sh::testing::blocked_clients(server()) >= base + 3; })) {
      ADD_FAILURE() << "the waiters never blocked";
    } else {
      int killed = std::stoi(admin(server(), {"CLIENT", "KILL", "TYPE", "normal"}));
      if (killed < 3) ADD_FAILURE() << "killed " << killed << " connections, expected the 3 blocked ones";
      if (!sh::testing::eventually([&] { return sh::testing::blocked_clients(server()) >= base + 3; }))
        ADD_FAILURE() << "the waiters did not block again after the kill";
    }
    f.set(42);
    q.push(9);
    bar.arrive_and_wait(10s);
  });
  auto outs = in_processes(3, [&](int id) -> std::string {
    if (id == 0) return std::to_string(f.get(10s));
    if (id == 1) return std::to_string(q.pop(10s));
    return std::to_string(bar.arrive_and_wait(10s));
  });
  helper.join();
  EXPECT_EQ(outs, (std::vector<std::string>{"42", "9", "0"}));
  EXPECT_EQ(q.size(), 0);
}

TEST_F(shared_test, RedisDownIsAClearError) {
  sh::process_settings().retry_budget = 300ms;
  int port = 0;
  {
    cppless::testing::local_redis gone;  // a port that surely had a server a moment ago
    port = gone.port();
  }
  auto start = std::chrono::steady_clock::now();
  try {
    sh::store::connect("redis://127.0.0.1:" + std::to_string(port));
    FAIL() << "connected to a stopped server";
  } catch (const sh::connection_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_F(shared_test, ServerStoppingMidRunAndComingBack) {
  sh::process_settings().retry_budget = 300ms;
  cppless::testing::local_redis redis;
  auto s = sh::store::connect(redis.url());
  auto c = s.counter("c");
  c.add(1);
  redis.stop();
  try {
    c.add(1);
    FAIL() << "add succeeded with the server down";
  } catch (const sh::connection_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(redis.port())), std::string::npos) << e.what();
  }
  redis.restart();  // empty (no persistence): the object is gone, the scripts too
  EXPECT_THROW(c.get(), sh::missing_object);
  auto again = s.counter("c");  // scripts are sent again (NOSCRIPT -> EVAL)
  EXPECT_EQ(again.add(2), 2);
}

TEST_F(shared_test, WrongPasswordAndAcl) {
  cppless::testing::local_redis::options opts;
  opts.password = "s3cret-pw";
  cppless::testing::local_redis locked(opts);
  const std::string at = "127.0.0.1:" + std::to_string(locked.port());
  try {
    sh::store::connect("redis://" + at);
    FAIL() << "no password accepted";
  } catch (const sh::auth_error& e) {
    EXPECT_NE(std::string(e.what()).find(at), std::string::npos) << e.what();
  }
  try {
    sh::store::connect("redis://:wrong-pw@" + at);
    FAIL() << "wrong password accepted";
  } catch (const sh::auth_error& e) {
    EXPECT_NE(std::string(e.what()).find(at), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("wrong-pw"), std::string::npos) << e.what();
  }
  // The rejected password was not kept for the address: without one, the guidance is NOAUTH's.
  try {
    sh::store::connect("redis://" + at);
    FAIL() << "no password accepted";
  } catch (const sh::auth_error& e) {
    EXPECT_NE(std::string(e.what()).find("requires authentication"), std::string::npos) << e.what();
  }
  auto s = sh::store::connect(locked.url());
  auto c = s.counter("c");
  EXPECT_EQ(c.add(1), 1);
  // Handles carry the address, never the password; a worker process finds it itself.
  cppless::byte_buffer bytes = cppless::to_bytes(c);
  std::string raw(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  EXPECT_EQ(raw.find("s3cret-pw"), std::string::npos);
  auto outs = in_processes(2, [&](int) {
    auto copy = cppless::from_bytes<sh::counter>(bytes.span());
    return std::to_string(copy.add(1) > 0);
  });
  EXPECT_EQ(c.get(), 3);

  // An ACL user that may only PING.
  admin(locked, {"ACL", "SETUSER", "pinger", "on", ">pinger-pw", "~*", "+ping"}, "s3cret-pw");
  auto limited = sh::store::connect("redis://pinger:pinger-pw@" + at);
  try {
    limited.counter("c");
    FAIL() << "an ACL user without EVAL ran a script";
  } catch (const sh::auth_error& e) {
    EXPECT_NE(std::string(e.what()).find("pinger"), std::string::npos) << e.what();
  }
}
