// The worker side of the local backend: the worker's link to its host.
//
// It serves calls the host sends, and it is also the backend of any dispatcher created inside
// a function (nested dispatch): nested calls go to the host's pool, and while a function waits
// for them the worker tells the host it is waiting and serves whatever calls it is given.
#pragma once

#include "shm_channel.hpp"
#include "worker_process.hpp"

#include <cppless/instance.hpp>
#include "core/protocol.hpp"

#include <chrono>
#include <atomic>
#include <mutex>
#include <unordered_map>

namespace cppless::local {

class uplink final : public backend {
 public:
  uplink(region shared, int doorbell, const worker_settings& settings, pid_t host);

  // The worker's main loop; returns the process exit code.
  int serve_forever();

  void submit(invocation&& call, completion done) override;
  void progress(std::unique_lock<std::mutex>& lock, clock::time_point until) override;
  std::string name() const override { return "local (nested)"; }

 private:
  bool next_frame(protocol::frame_header& header, byte_buffer& payload, bool announce_waiting,
                  clock::time_point until);
  void send(const protocol::frame_header& header, std::span<const std::byte> payload, bool wake = true);
  // Frames waiting in the inbound ring: 0, 1, or 2 for "two or more".
  int frames_waiting() const;
  void serve(const protocol::frame_header& header, byte_buffer&& payload);
  void deliver(const protocol::frame_header& header, byte_buffer&& payload);
  // Sleeps until the host wakes us: for room in the outbound ring, or for inbound bytes.
  void sleep_until_woken(clock::time_point until, bool for_room);
  void notify_host();          // after writing: the host may sleep waiting for frames
  void notify_host_of_room();  // after reading: the host may sleep waiting for room
  // The host published a ring position out of range: nothing sane can follow, so exit.
  void leave_if_broken() const;

  region shared_;
  ring in_, out_;
  int doorbell_;
  std::chrono::microseconds hot_poll_;
  std::size_t max_payload_;
  pid_t host_;
  protocol::frame_decoder decoder_;
  std::mutex send_mutex_;  // user threads in a function may dispatch concurrently
  std::uint64_t next_nested_id_ = 1;
  std::unordered_map<std::uint64_t, completion> nested_;
  unsigned served_ = 0;
  byte_buffer spare_result_;  // the last result's buffer, for the next one
  std::atomic<bool> doorbell_owed_{false};  // a result was sent without waking a sleeping host
};

// The uplink of this process if it is a worker, else null.
std::shared_ptr<uplink> current_uplink();

}  // namespace cppless::local
