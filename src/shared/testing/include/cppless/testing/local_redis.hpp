// cppless/testing/local_redis.hpp — a private redis-server on a free loopback port, for tests,
// benchmarks and demos (no persistence unless asked, data in a temporary directory, stopped by
// pid). Not user API: the target cppless_shared_testing, not cppless::shared, provides it.
//
//   cppless::testing::local_redis redis;                  // started, answering
//   auto store = cppless::shared::store::connect(redis.url());
//
// The server is bound to 127.0.0.1 only, and dies with the thread that started it
// (PR_SET_PDEATHSIG), so a crashed test leaves no server behind.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

namespace cppless::testing {

class local_redis {
 public:
  struct options {
    std::string password;                 // non-empty: started with --requirepass
    std::string executable = "redis-server";
    std::vector<std::string> extra_args;  // e.g. {"--maxclients", "128"}
  };

  local_redis();
  explicit local_redis(options opts);
  ~local_redis();
  local_redis(const local_redis&) = delete;
  local_redis& operator=(const local_redis&) = delete;

  [[nodiscard]] int port() const noexcept { return port_; }
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  // redis://[:password@]127.0.0.1:<port>
  [[nodiscard]] std::string url() const;
  // Stops the server now (SIGTERM, then SIGKILL after 2 s); the port stays reserved for restart().
  void stop();
  // Kills it at once (SIGKILL: no shutdown, no final save); the port stays reserved for restart().
  void kill();
  // Starts it again on the same port, in the same directory (so an append-only file, when
  // extra_args turned it on, is loaded again; otherwise the data is gone).
  void restart();
  // The directory the server runs in (its log is redis.log there).
  [[nodiscard]] const std::string& dir() const noexcept { return dir_; }

 private:
  void start();

  options opts_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace cppless::testing
