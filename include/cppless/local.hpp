// cppless/local.hpp — the local backend: warm worker processes on this machine (the default).
//
//   cppless::local_dispatcher dispatcher;             // one warm worker per core
//   auto instance = dispatcher.create_instance();
//
// Workers are this same executable started in worker mode (chosen before main runs), kept and
// reused. Host and worker talk over shared-memory rings: an idle side polls hot for
// `hot_poll` and then sleeps on a futex/eventfd (warm). A call that crashes its worker (signal,
// abort) or runs past its with_timeout fails alone, with worker_crashed / timeout_error, and the
// worker is replaced. Mode `cold` starts one process per call instead (the thesis' local
// dispatcher), for comparison. Inside a worker, a local_dispatcher sends nested calls back to
// the host's pool (a worker waiting for nested calls serves other calls meanwhile), so recursion
// is deadlock-free and the number of processes stays bounded.
#pragma once

#include <cppless/instance.hpp>

#include <chrono>
#include <memory>

namespace cppless {

namespace local {
class local_pool;
}

struct local_options {
  enum class start_mode { warm, cold };

  unsigned workers = 0;                          // 0: one per hardware thread
  start_mode mode = start_mode::warm;
  std::chrono::microseconds hot_poll{200};       // busy-poll before sleeping (0: always sleep)
  unsigned max_nesting = 64;                     // nested calls one waiting worker may take on
  // Calls handed to a busy worker ahead of time, so that it starts the next one the moment it
  // finishes, without waiting for the host (which may then sleep instead of polling a core
  // away from the workers). A call handed over but not started when its worker dies goes to
  // another worker: it never ran. 0: a worker gets its next call only after it returned a result.
  // From 2 on, a worker with two calls or more waiting wakes a sleeping host only when it is down
  // to one (the host still looks every millisecond), which spares the host wake-ups for many short
  // calls; held calls are not taken back by an idle worker, so with calls of very unequal length
  // keep 1.
  unsigned prefetch = 1;
  // Bigger call payloads fail at dispatch, bigger results at the worker, with payload_too_large
  // (at most protocol::max_payload, 1 GiB: a frame's hard cap).
  std::size_t max_payload = std::size_t{256} << 20;
  // Payload bytes the host holds for calls not yet handed to a worker (queued, held behind a
  // running call, or waiting for room in a ring). Past it, dispatch waits for room (driving the
  // pool meanwhile), or with `queue_full_policy::fail` throws cppless::queue_full. 0: no bound.
  std::size_t max_queued_bytes = std::size_t{1} << 30;
  enum class queue_full_policy { block, fail };
  queue_full_policy when_full = queue_full_policy::block;
};

class local_dispatcher {
 public:
  // Default options, except where the environment says otherwise: CPPLESS_WORKERS (number of
  // workers, 0: one per hardware thread), CPPLESS_HOT_POLL_US (hot_poll in microseconds) and
  // CPPLESS_PREFETCH (calls held per busy worker).
  local_dispatcher();
  explicit local_dispatcher(local_options options);

  instance create_instance() const;

  // Worker processes currently alive (0 before the first call and inside a worker).
  unsigned worker_count() const;
  // Workers started so far, including replacements of crashed or killed ones.
  unsigned workers_started() const;
  const local_options& options() const { return options_; }

 private:
  local_options options_;
  std::shared_ptr<backend> backend_;       // the pool, or inside a worker the link to its host
  std::shared_ptr<local::local_pool> pool_;  // null inside a worker
};

}  // namespace cppless
