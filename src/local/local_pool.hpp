// The host side of the local backend: a pool of worker processes, the queue of calls waiting
// for one, and the event loop that moves frames, notices deaths and enforces timeouts.
#pragma once

#include "shm_channel.hpp"
#include "slot_table.hpp"
#include "worker_process.hpp"

#include <cppless/instance.hpp>
#include <cppless/local.hpp>
#include "core/protocol.hpp"

#include <deque>
#include <memory>
#include <string>
#include <vector>

namespace cppless::local {

class local_pool final : public backend {
 public:
  explicit local_pool(local_options options);
  ~local_pool() override;

  void submit(invocation&& call, completion done) override;
  void admit(std::unique_lock<std::mutex>& lock, std::size_t payload_bytes) override;
  void progress(std::unique_lock<std::mutex>& lock, clock::time_point until) override;
  std::string name() const override { return "local"; }

  unsigned alive();
  unsigned started();

 private:
  struct outgoing {
    protocol::frame_header header;
    byte_buffer payload;
    std::size_t sent = 0;  // bytes of header + payload already in the ring
  };

  struct worker {
    std::uint64_t generation = 0;  // unique per process started
    worker_process process;
    region shared;
    protocol::frame_decoder decoder;
    std::deque<outgoing> outbound;
    std::vector<std::uint64_t> running;  // host call ids assigned to it
    bool waiting = false;                // blocked on nested calls: may take more
    bool retiring = false;               // told to shut down (cold mode)
    unsigned served = 0;
    bool killed = false;                 // SIGKILL sent; `kill_reason` says why
    bool corrupt = false;                // its frames or ring positions cannot be trusted any more
    std::string kill_reason;
  };

  struct call {
    invocation work;
    completion done;                    // calls from instances
    std::uint64_t owner_generation = 0;  // nested calls: the worker waiting for it...
    std::uint64_t owner_call_id = 0;     // ...and its id there
    clock::time_point submitted, assigned;
    clock::time_point deadline = clock::time_point::max();
    std::uint64_t runner = 0;            // generation of the worker running it
    // Handed to a busy worker behind another call and certainly not started yet: its payload is
    // kept (it may go to another worker), and its clock (assigned, deadline) starts later: when
    // the call before it ends, or when the worker reports it started it out of turn (a worker
    // waiting for nested calls serves what it reads at once, and says so with a `started` frame
    // before running it).
    bool prefetched = false;
  };

  std::uint64_t enqueue(call&& c, bool urgent);
  // Hands queued calls to workers; `now` (if known) saves a clock read: it costs ~25 ns here.
  void schedule(clock::time_point now = {});
  worker* pick_worker();
  worker* pick_prefetch_worker();
  // A held call starts now: its clock starts and its kept payload is dropped.
  void start(call& c, clock::time_point now);
  // The worker's first call (if prefetched) is starting now: start its clock.
  void started_next(worker& w, clock::time_point now);
  // Every worker holds a call behind the one it runs, there is no core to spare, and calls
  // last longer than a sleeping host takes to wake: polling would only take a core from them.
  bool workers_fed() const;
  worker* spawn();
  void assign(std::uint64_t id, worker& w, clock::time_point now);
  bool step();
  void housekeeping(clock::time_point now);
  // Workers running a call that has already lasted longer than the hot-poll window.
  unsigned computing_workers(clock::time_point now) const;
  bool flush(worker& w);
  bool read(worker& w);
  void handle_frame(worker& w, const protocol::frame_header& header, byte_buffer&& payload);
  void finish(std::uint64_t id, outcome&& result);
  void enforce_timeouts(clock::time_point now);
  // Kills a worker for `reason` (a timeout, a broken protocol); its calls end when it is reaped.
  void kill_worker(worker& w, std::string reason);
  // A worker whose shared memory went bad is killed (checked where the host reads it).
  bool check_ring(worker& w);
  // Bytes of payload the pool holds for calls not yet in a ring (queued, held, or waiting for
  // room), bounded by local_options::max_queued_bytes.
  void hold_bytes(std::size_t n) { held_bytes_ += n; }
  void release_bytes(std::size_t n) { held_bytes_ -= std::min(held_bytes_, n); }
  void wait_for_events(std::unique_lock<std::mutex>& lock, clock::time_point until);
  void handle_events(int timeout_ms, std::unique_lock<std::mutex>* unlock_while_waiting);
  void reap(std::uint64_t generation);
  worker* find_worker(std::uint64_t generation);
  void notify_worker(worker& w);
  void send(worker& w, const protocol::frame_header& header, byte_buffer&& payload);
  // Writes what fits into the ring; the rest waits in w.outbound, owning its bytes: `owned`
  // (moved from) if given, else a copy of `payload`.
  void send_frame(worker& w, const protocol::frame_header& header, std::span<const std::byte> payload,
                  byte_buffer* owned);

  local_options options_;
  unsigned max_workers_;
  unsigned cores_;
  int doorbell_ = -1;
  int epoll_ = -1;
  bool sleeping_ = false;
  std::uint64_t next_generation_ = 1;
  std::uint64_t completions_ = 0;
  unsigned started_ = 0;
  clock::time_point last_event_check_{};
  double mean_exec_ns_ = 0;  // moving average of the functions' execution times
  std::size_t held_bytes_ = 0;
  slot_table<call> calls_;                          // submitted and not ended
  std::deque<std::uint64_t> queue_;                 // waiting for a worker
  std::vector<std::unique_ptr<worker>> workers_;
};

}  // namespace cppless::local
