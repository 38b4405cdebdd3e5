// The executor manager of the lease backend (`cppless executor-manager`), one per node that
// lends cores. It registers with the resource manager and beats; it accepts a client connection
// only with a valid, unexpired token for itself (checked before any byte of code arrives),
// receives the client's executable once per content hash (cached on disk, verified), and starts
// one executor per connection: that executable in lease worker mode, pinned to a core, memory
// limited, talking frames over the very connection the client opened (the manager hands the
// socket over and is off the invocation path). It kills executors when their lease ends or is
// revoked, and accounts allocation, compute and hot-polling time per lease.
#pragma once

#include "connection_threads.hpp"
#include "executor_shared.hpp"
#include "net.hpp"
#include "token.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

namespace cppless::lease {

enum class memory_enforcement { automatic, cgroup, rlimit, none };

struct executor_manager_options {
  net::address resource_manager;
  net::address listen{"127.0.0.1", 0};
  std::string advertise;           // address clients use (default: the listening address)
  std::string cluster_key;
  unsigned cores = 1;
  std::vector<int> cpus;           // CPUs executors are pinned to (default: the first `cores` allowed)
  unsigned memory_mb = 1024;
  std::string cache_dir;           // executables by content hash (default: $TMPDIR/cppless-executors-<uid>)
  std::size_t max_executable = std::size_t{1} << 30;
  memory_enforcement memory = memory_enforcement::automatic;
  std::string cgroup_dir;          // cgroup v2 directory delegated to this manager (automatic: tried)
  std::chrono::microseconds hot_poll{2'000'000};  // hot executors busy-poll this long when idle
};

class executor_manager {
 public:
  explicit executor_manager(executor_manager_options options);
  ~executor_manager();

  net::address address() const { return address_; }
  void run();   // until stop()
  void stop();
  // How memory is enforced on this machine (resolved from `automatic`).
  memory_enforcement enforcement() const { return options_.memory; }

 private:
  struct executor {
    pid_t pid = -1;
    int cpu = -1;
    unsigned core_index = 0;
    std::chrono::steady_clock::time_point started, ended;
    executor_counters* counters = nullptr;  // mapped from a memfd; kept after exit for billing
    bool running = true;
    std::string cgroup;
    int watch_fd = -1;  // our copy of the client's connection: its hang-up means the client is gone
  };
  struct lease_rec {
    lease_token token;
    bool ended = false;  // revoked or expired: no new executors, running ones killed
    std::vector<executor> executors;
  };

  void connect_resource_manager();
  void resource_manager_loop();
  void serve_client(int fd);
  std::string ensure_executable(int fd, const std::string& hash, std::uint64_t size, bool& cached);
  executor spawn(int socket_fd, const lease_rec& lease, const std::string& path, unsigned index);
  // Runs `fork_and_exec` on the spawner thread: PR_SET_PDEATHSIG fires when the *thread* that
  // forked ends, so executors must be children of a thread that lives as long as the manager.
  void on_spawner(std::function<void()> work);
  void spawner_loop();
  void end_lease(const std::string& id, const char* why);
  void reap();
  nlohmann::json usage_locked() const;

  executor_manager_options options_;
  net::fd_handle listener_;
  net::address address_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::set<std::string> ids_;                 // manager ids the resource manager gave us
  std::map<std::string, lease_rec> leases_;
  std::vector<unsigned> cpu_load_;            // executors per CPU of options_.cpus
  std::set<std::string> verified_;            // executables whose hash was checked this run
  core_table* cores_ = nullptr;
  int cores_fd_ = -1;
  net::fd_handle rm_link_;
  std::chrono::milliseconds heartbeat_{1000};
  std::vector<std::thread> threads_;  // resource manager link, housekeeping
  connection_threads connections_;
  std::mutex spawn_mutex_;
  std::condition_variable spawn_cv_;
  std::deque<std::function<void()>> spawn_queue_;
  std::thread spawner_;
};

}  // namespace cppless::lease
