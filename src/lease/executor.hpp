// The executor side of the lease backend: this executable started by an executor manager in
// lease worker mode, serving frames over the TCP connection its client opened. It is also the
// backend of a lease_dispatcher created inside a function: nested calls go back to the client.
#pragma once

#include "executor_shared.hpp"

#include <cppless/instance.hpp>
#include "core/protocol.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace cppless::lease_detail {

class executor_link final : public backend {
 public:
  executor_link(int socket, lease::executor_counters* counters, lease::core_table* cores, unsigned core,
                std::chrono::microseconds hot_poll, bool warm);

  int serve_forever();

  void submit(invocation&& call, completion done) override;
  void progress(std::unique_lock<std::mutex>& lock, clock::time_point until) override;
  std::string name() const override { return "lease (nested)"; }

 private:
  bool next_frame(protocol::frame_header& header, byte_buffer& payload, bool announce_waiting, clock::time_point until);
  void send(const protocol::frame_header& header, std::span<const std::byte> payload);
  void serve(const protocol::frame_header& header, byte_buffer&& payload);
  void deliver(const protocol::frame_header& header, byte_buffer&& payload);

  int fd_;
  lease::executor_counters* counters_;
  lease::core_table* cores_;
  unsigned core_;
  std::chrono::microseconds hot_poll_;
  bool warm_;
  std::uint32_t self_;
  unsigned holding_core_ = 0;  // depth of calls running here while holding the core's flag
  protocol::frame_decoder decoder_;
  std::vector<std::byte> inbuf_;
  std::size_t in_pos_ = 0, in_len_ = 0;
  std::mutex send_mutex_;
  std::uint64_t next_nested_id_ = 1;
  std::unordered_map<std::uint64_t, completion> nested_;
  unsigned served_ = 0;
  byte_buffer spare_result_;
};

// The link of this process if it is a lease executor, else null.
std::shared_ptr<executor_link> current_executor_link();
// The worker mode: serves if CPPLESS_LEASE_EXECUTOR is set.
std::optional<int> executor_mode(int argc, char** argv);

}  // namespace cppless::lease_detail
