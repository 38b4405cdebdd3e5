// cppless/lease.hpp — the lease backend: functions run on leased executors of a cluster (the
// rFaaS design: a resource manager grants time-limited leases on executor managers; the client
// then invokes functions directly on the leased executors, off the resource manager's path).
//
//   auto dispatcher = cppless::lease_dispatcher::from_env();   // CPPLESS_RESOURCE_MANAGER=tcp://10.0.0.5:7700
//   auto instance = dispatcher.create_instance(cppless::lease_request{
//       .cores = 8, .memory_mb = 2048, .duration = std::chrono::minutes(10), .mode = cppless::hot});
//   cppless::dispatch(instance, fn, result);                   // as on every backend
//   cppless::wait(instance, 1);
//   auto usage = instance.usage();                              // allocation / compute / hot-poll time
//
// An executor is this same executable, shipped once to each executor manager (cached by content
// hash), started in lease worker mode (chosen before main runs), pinned to one core with its
// memory limited, and connected to the client by one persistent TCP connection carrying the
// frames of the worker protocol (src/core/protocol.hpp). Hot executors busy-poll their socket between calls (for the
// manager's hot-poll window, then block); warm executors block, and refuse at once a call their
// core cannot take (another executor of that core runs one): the client sends it elsewhere.
// Inside a function, lease_dispatcher::from_env() sends nested calls back to the client, which
// runs them on the lease's executors. Every call ends exactly once; the lease's own failures end
// calls in lease_error / lease_expired / worker_crashed. See docs/leases.md.
#pragma once

#include <cppless/error.hpp>
#include <cppless/instance.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cppless {

enum class lease_mode { hot, warm };
inline constexpr lease_mode hot = lease_mode::hot;
inline constexpr lease_mode warm = lease_mode::warm;

struct lease_request {
  unsigned cores = 1;                       // executors (one process pinned to one core each)
  unsigned memory_mb = 256;                 // per executor, enforced by its manager
  std::chrono::milliseconds duration = std::chrono::minutes(10);
  lease_mode mode = lease_mode::hot;
};

// A call lost with its executor or lease: the connection broke, no executor is left.
class lease_error : public call_error {
 public:
  using call_error::call_error;
};
// The lease ended (its duration ran out) before the call did.
class lease_expired : public lease_error {
 public:
  using lease_error::lease_error;
};
// The resource manager or an executor manager said no: authentication, resources, token.
class lease_refused : public error {
 public:
  using error::error;
};

// What the executor managers accounted for one lease (rFaaS' billing C = Ca·ta + Cc·tc + Ch·th).
struct lease_usage {
  std::chrono::nanoseconds allocation{0};  // ta: executors alive, summed over executors
  std::chrono::nanoseconds compute{0};     // tc: inside functions
  std::chrono::nanoseconds hot_poll{0};    // th: hot executors polling for the next call
  std::uint64_t calls = 0, rejected = 0;
  unsigned executors = 0;
  double cost(double per_allocation_s, double per_compute_s, double per_hot_poll_s) const;
};

// One executor of a lease, as the client sees it.
struct lease_executor {
  std::string manager, host, address;  // manager id, its host name, its address
  int pid = 0, cpu = -1;
  bool shipped = false;                // the executable was sent (not found in the manager's cache)
  bool alive = true;
  std::uint64_t calls = 0;             // results received from it
};

struct lease_options {
  std::string resource_manager;        // tcp://host:port
  std::string user, secret;            // the user's name and own secret at the resource manager
  std::string executable;              // shipped to executors; default: this program (/proc/self/exe)
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::microseconds client_hot_poll{200};  // hot leases: the client busy-polls this long
};

namespace lease_detail {
class lease_client;
}

// An instance bound to one lease; ends (releases) the lease when its last copy goes away.
class lease_instance : public instance {
 public:
  lease_instance() = default;
  // Figures the executor managers reported (through the resource manager, up to a heartbeat
  // old), or read from the managers directly if the resource manager cannot be reached.
  lease_usage usage() const;
  std::string lease_id() const;
  std::vector<lease_executor> executors() const;
  std::chrono::system_clock::time_point expires() const;
  // The resource manager's word on the lease: "active", "released", "expired", or "lost" (every
  // executor manager holding part of it stopped beating).
  std::string state() const;
  // Gives the lease back now: its executors are stopped; calls still running fail.
  void release();

 private:
  friend class lease_dispatcher;
  explicit lease_instance(std::shared_ptr<lease_detail::lease_client> client);
  std::shared_ptr<lease_detail::lease_client> client_;
};

class lease_dispatcher {
 public:
  // CPPLESS_RESOURCE_MANAGER, CPPLESS_USER (default: $USER), CPPLESS_SECRET or
  // CPPLESS_SECRET_FILE. Inside an executor: a dispatcher whose instances send nested calls
  // back to the client.
  static lease_dispatcher from_env();
  explicit lease_dispatcher(lease_options options);

  // Takes a lease and starts its executors (throws lease_refused, or cppless::error for an
  // unreachable resource manager). Inside an executor the request is ignored: nested calls go
  // to the client's lease.
  lease_instance create_instance(const lease_request& request) const;
  const lease_options& options() const { return options_; }

 private:
  lease_options options_;
  bool nested_ = false;
};

}  // namespace cppless
