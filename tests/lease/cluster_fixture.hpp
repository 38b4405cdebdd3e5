// A lease cluster for tests: a resource manager and executor managers as real `cppless`
// processes on loopback ports (or inside network namespaces), a secrets file in a temporary
// directory, and the client settings for this test binary. Everything started is stopped by pid.
#pragma once

#include <cppless/lease.hpp>

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace lease_test {

struct process {
  pid_t pid = -1;
  std::string address;  // from its "listening on" line
  int out_fd = -1;      // its stdout
};

class cluster {
 public:
  // `heartbeat_ms`: what the resource manager asks of managers (small in failure tests).
  explicit cluster(long heartbeat_ms = 200);
  ~cluster();
  cluster(const cluster&) = delete;
  cluster& operator=(const cluster&) = delete;

  // Starts an executor manager; `extra` are further options (e.g. "--cpus", "0").
  process& add_manager(unsigned cores, unsigned memory_mb = 4096, std::vector<std::string> extra = {});

  cppless::lease_options client(const std::string& user = "alice") const;
  cppless::lease_dispatcher dispatcher(const std::string& user = "alice") const { return cppless::lease_dispatcher(client(user)); }

  process& resource_manager() { return rm_; }
  std::deque<process>& managers() { return ems_; }
  const std::string& dir() const { return dir_; }
  const std::string& cluster_key() const { return cluster_key_; }
  std::string secret_of(const std::string& user) const;

  // Sends `sig` to a process of ours and waits until it is gone (SIGKILL, SIGTERM).
  void stop(process& p, int sig);
  // Child processes (executors) of a manager, from /proc.
  static std::vector<pid_t> children_of(pid_t pid);

 private:
  process spawn(const std::vector<std::string>& args, const std::vector<std::string>& env);
  std::string dir_, cluster_key_;
  process rm_;
  std::deque<process> ems_;  // references to its elements stay valid as managers are added
};

// Waits for a condition with a bounded deadline (no sleeps as synchronisation).
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = std::chrono::seconds(10));

}  // namespace lease_test
