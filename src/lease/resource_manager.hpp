// The resource manager of the lease backend (`cppless resource-manager`): it keeps the executor
// managers that register and send heartbeats, grants time-limited leases on them to
// authenticated users (least-loaded placement, signed tokens), takes leases back when they are
// released or expire, and collects the usage the managers report. It is never on the invocation
// path: once a client holds its tokens, calls go straight to the executors.
#pragma once

#include "connection_threads.hpp"
#include "net.hpp"
#include "token.hpp"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cppless::lease {

struct resource_manager_options {
  net::address listen{"127.0.0.1", 0};
  secrets keys;
  std::chrono::milliseconds heartbeat{1000};  // managers beat this often...
  unsigned missed_beats = 3;                  // ...and are dropped after this many missed
  std::chrono::milliseconds max_duration = std::chrono::hours(24);
};

class resource_manager {
 public:
  explicit resource_manager(resource_manager_options options);
  ~resource_manager();

  net::address address() const { return address_; }
  // Serves until stop() (from another thread or a signal handler's thread).
  void run();
  void stop();

 private:
  struct part {
    std::string manager;
    unsigned cores = 0;
    lease_token token;
    bool lost = false;
    nlohmann::json usage = nlohmann::json::object();
  };
  struct lease_rec {
    std::string id, user, mode, state = "active";  // active | released | expired | lost
    unsigned memory_mb = 0;
    std::int64_t expires_ms = 0;
    std::vector<part> parts;
  };
  struct manager_rec {
    std::string id;
    net::address address;
    unsigned cores = 0, memory_mb = 0, used_cores = 0, used_memory_mb = 0;
    std::chrono::steady_clock::time_point last_beat;
    std::shared_ptr<net::fd_handle> link;
    std::shared_ptr<std::mutex> send_mutex;
  };

  void serve_connection(int fd);
  void serve_manager(int fd, const nlohmann::json& hello);
  void serve_client(int fd, const std::string& user);
  nlohmann::json grant(const std::string& user, const nlohmann::json& request);
  nlohmann::json release(const std::string& user, const std::string& lease, const std::string& why);
  nlohmann::json status(const std::string& user, const std::string& lease);
  nlohmann::json describe_lease(const lease_rec& l) const;
  void free_parts(lease_rec& l);
  void drop_manager(const std::string& id, const std::string& why);
  void tell_manager(const std::string& id, const nlohmann::json& message);
  void housekeeping();

  resource_manager_options options_;
  net::fd_handle listener_;
  net::address address_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::map<std::string, manager_rec> managers_;
  std::map<std::string, lease_rec> leases_;
  std::uint64_t next_manager_ = 1, next_lease_ = 1;
  std::string instance_tag_;  // makes lease ids unique across restarts
  connection_threads connections_;
};

}  // namespace cppless::lease
