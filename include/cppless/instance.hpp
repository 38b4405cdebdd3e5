// cppless/instance.hpp — the dispatcher-independent core: backends, instances, call statistics.
//
// A dispatcher (local_dispatcher, later aws_dispatcher, lease_dispatcher) owns a backend: the
// thing that moves serialized calls to workers and results back. create_instance() returns an
// instance: the handle user code dispatches on and waits on. Instances are cheap handles that
// share state; an instance (and its copies) is meant to be driven by one thread at a time, while
// several instances of one dispatcher may be used from several threads.
#pragma once

#include <cppless/byte_buffer.hpp>
#include <cppless/callback.hpp>
#include <cppless/config.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>

namespace cppless {

using clock = std::chrono::steady_clock;

// What cppless knows about one finished call.
struct call_stats {
  std::int64_t call_id = -1;
  std::string invocation_id;               // the backend's name for it (local: "w<pid>-<n>")
  bool cold = false;                       // first call served by a fresh worker
  std::chrono::nanoseconds queued{0};      // dispatch until handed to a worker
  std::chrono::nanoseconds execution{0};   // inside the function, measured by the worker
  std::chrono::nanoseconds round_trip{0};  // dispatch until the result was on the host
  std::chrono::nanoseconds billed{0};      // AWS: Lambda's billed duration (0 elsewhere)
  int worker = -1;                         // local backend: the worker's process id
};

// One serialized call, as a backend receives it.
struct invocation {
  std::uint64_t function_id = 0;
  std::uint64_t fingerprint = 0;
  const char* function_name = "";  // for error messages
  config_values config;
  byte_buffer payload;
};

// How one call ended: a result payload, or an error (a cppless::call_error subclass).
struct outcome {
  byte_buffer result;
  std::exception_ptr error;
  call_stats stats;
};

// A place that runs invocations. Every submitted call completes exactly once.
class backend {
 public:
  using completion = callback<void(outcome&&)>;  // moved, never copied; room for a typical target
  virtual ~backend() = default;

  // Called with mutex() held before submit(): a backend that bounds the bytes it holds for calls
  // not yet sent blocks here (driving progress) or throws queue_full. By default: no bound.
  virtual void admit(std::unique_lock<std::mutex>& lock, std::size_t payload_bytes) {
    (void)lock;
    (void)payload_bytes;
  }
  // Both are called with mutex() held. `done` runs later, inside progress(), also under the lock.
  virtual void submit(invocation&& call, completion done) = 0;
  // Moves calls forward; returns after running at least one completion, or at `until`.
  // May release the lock while sleeping.
  virtual void progress(std::unique_lock<std::mutex>& lock, clock::time_point until) = 0;
  // A name for messages ("local", "aws", ...).
  virtual std::string name() const = 0;

  std::mutex& mutex() { return mutex_; }

  // Runs progress() until `ready()` holds. With several threads waiting, one drives the backend
  // at a time and wakes the others whenever a call ended. Called with mutex() held.
  void drive_until(std::unique_lock<std::mutex>& lock, const std::function<bool()>& ready);

 private:
  std::mutex mutex_;
  std::condition_variable driver_done_;
  bool driving_ = false;
  std::thread::id driver_{};
};

namespace detail {
struct instance_state;
}

class instance {
 public:
  using result_sink = std::function<void(std::span<const std::byte>)>;

  instance() = default;  // empty: only assignable
  explicit instance(std::shared_ptr<backend> backend);

  // Low level: sends a serialized call. `sink` decodes the result into the caller's storage.
  // Returns the call's id (unique in this instance).
  std::int64_t submit(invocation&& call, result_sink sink);

  // Waits for one dispatched call to end and returns its id and statistics; each id exactly
  // once. A failed call throws a cppless::call_error whose call_id() is that id.
  std::pair<std::int64_t, call_stats> wait_one();

  // Calls dispatched but not yet returned by wait_one().
  std::size_t pending() const;

  // For futures: a call whose end is reported to `done` instead of to wait_one().
  void submit_detached(invocation&& call, backend::completion done);
  // Drives the backend until `ready()` holds (used by futures and task graphs).
  void drive_until(const std::function<bool()>& ready);

  backend& get_backend() const;

 private:
  std::shared_ptr<detail::instance_state> state_;
};

}  // namespace cppless
