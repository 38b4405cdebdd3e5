// The client side of the lease backend: one lease, its executors' connections, and the event
// loop that moves frames over them (the lease counterpart of the local backend's pool).
#pragma once

#include "net.hpp"
#include "token.hpp"

#include <cppless/instance.hpp>
#include <cppless/lease.hpp>
#include "core/protocol.hpp"

#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

namespace cppless::lease_detail {

class lease_client final : public backend {
 public:
  // Takes the lease from the resource manager and starts its executors; throws lease_refused
  // (the resource manager or a manager said no) or cppless::error (unreachable).
  lease_client(const lease_options& options, const lease_request& request);
  ~lease_client() override;

  void submit(invocation&& call, completion done) override;
  void progress(std::unique_lock<std::mutex>& lock, clock::time_point until) override;
  std::string name() const override { return "lease"; }

  lease_usage usage();
  const std::string& lease_id() const { return lease_id_; }
  std::vector<lease_executor> executors();
  std::chrono::system_clock::time_point expires() const { return expires_wall_; }
  void release();
  std::string state() const;

 private:
  struct outgoing {
    protocol::frame_header header;
    byte_buffer payload;
    std::size_t sent = 0;
  };
  struct connection {
    lease::net::fd_handle fd;
    protocol::frame_decoder decoder;
    std::deque<outgoing> out;
    std::vector<std::uint64_t> running;
    bool waiting = false;      // blocked on nested calls: may take more
    bool refused = false;      // refused a call (its core was busy): skipped until a result arrives
    clock::time_point refused_at{};
    lease_executor info;
    std::size_t part = 0;          // its part of the grant (manager, token)
    unsigned replacements = 0;     // executors started again in this slot
  };
  struct call {
    invocation work;
    completion done;
    std::size_t owner = npos;          // nested: the connection of the executor waiting for it
    std::uint64_t owner_call_id = 0;
    clock::time_point submitted, assigned;
    clock::time_point deadline = clock::time_point::max();
    std::size_t runner = npos;
  };
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  nlohmann::json ask_resource_manager(const nlohmann::json& request) const;
  void open_executor(const nlohmann::json& part, connection& c);
  void schedule(clock::time_point now);
  void assign(std::uint64_t id, std::size_t conn, clock::time_point now);
  void send(std::size_t conn, const protocol::frame_header& header, byte_buffer&& payload);
  bool flush(std::size_t conn);
  bool pump();  // reads and writes what is ready without blocking; true if anything happened
  void handle_frame(std::size_t conn, const protocol::frame_header& header, byte_buffer&& payload);
  void finish(std::uint64_t id, outcome&& result);
  void fail(std::uint64_t id, std::exception_ptr error);
  void lose(std::size_t conn, const std::string& why);
  // After a loss: starts a new executor in the slot (same token), if the lease is still on.
  void replace(std::size_t conn);
  void fail_queue_if_stranded();
  std::exception_ptr loss_error(const std::string& what) const;
  void enforce_deadlines(clock::time_point now);
  bool run_ready();
  void wait_for_events(std::unique_lock<std::mutex>& lock, clock::time_point until);

  lease_options options_;
  lease_request request_;
  std::string lease_id_;
  nlohmann::json grant_;
  clock::time_point expires_;                       // local clock
  std::chrono::system_clock::time_point expires_wall_;
  bool released_ = false;
  std::string stranded_;                            // why no executor is left ("" while some are)
  std::vector<connection> conns_;
  std::unordered_map<std::uint64_t, call> calls_;
  std::deque<std::uint64_t> queue_;
  std::vector<std::pair<completion, outcome>> ready_;
  std::uint64_t next_id_ = 1;
  std::size_t next_conn_ = 0;  // round robin start
  int wake_fd_ = -1;           // eventfd: a submit from another thread wakes a sleeping driver
  bool sleeping_ = false;
  std::vector<std::byte> inbuf_;
};

}  // namespace cppless::lease_detail
