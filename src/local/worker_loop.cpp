#include "tick_clock.hpp"
#include "uplink.hpp"
#include "worker_process.hpp"

#include <cppless/entry.hpp>
#include <cppless/error.hpp>

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace cppless::local {

namespace {
std::shared_ptr<uplink>& uplink_slot() {
  static std::shared_ptr<uplink> slot;
  return slot;
}

}  // namespace

std::shared_ptr<uplink> current_uplink() { return uplink_slot(); }

uplink::uplink(region shared, int doorbell, const worker_settings& settings, pid_t host)
    : shared_(std::move(shared)),
      in_(shared_.to_worker()),
      out_(shared_.to_host()),
      doorbell_(doorbell),
      hot_poll_(settings.hot_poll),
      max_payload_(settings.max_payload),
      host_(host),
      decoder_(settings.max_payload) {}

void uplink::notify_host() {
  if (shared_.header().host_sleeping.load(std::memory_order_seq_cst)) {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(doorbell_, &one, sizeof one);
  }
}

void uplink::notify_host_of_room() {
  // The read position was published with a release store; the fence orders it before the
  // flags' loads (store-load), so a host that went to sleep waiting for room is never missed.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  region_header& h = shared_.header();
  // host_sleeping first (acquire): the host sets host_wants_room before it, so it is seen too.
  if (h.host_sleeping.load(std::memory_order_acquire) && h.host_wants_room.load(std::memory_order_relaxed)) {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(doorbell_, &one, sizeof one);
  }
}

void uplink::sleep_until_woken(clock::time_point until, bool for_room) {
  region_header& h = shared_.header();
  h.worker_sleeping.store(1, std::memory_order_seq_cst);
  const std::uint32_t seen = h.worker_seq.load(std::memory_order_seq_cst);
  // Re-check what we wait for after announcing the sleep: the host may have just acted.
  if (for_room ? out_.writable() == 0 : in_.readable() == 0) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(until - clock::now()).count();
    futex_wait(h.worker_seq, seen, static_cast<std::uint32_t>(std::clamp<long long>(left, 1, 100)));
  }
  h.worker_sleeping.store(0, std::memory_order_relaxed);
  if (::getppid() != host_) std::_Exit(worker_exit::clean);  // the host is gone; nobody wants our results
  leave_if_broken();
}

void uplink::leave_if_broken() const {
  if (!shared_.broken()) return;
  std::fprintf(stderr, "cppless worker: shared memory with the host is corrupt (%s); exiting\n",
               shared_.broken_reason().c_str());
  std::_Exit(worker_exit::protocol_violation);
}

void uplink::send(const protocol::frame_header& header, std::span<const std::byte> payload, bool wake) {
  std::lock_guard guard(send_mutex_);
  std::span<const std::byte> head(reinterpret_cast<const std::byte*>(&header), sizeof header);
  while (!head.empty() || !payload.empty()) {
    const std::size_t n = out_.write_some(head, payload);
    if (n == 0) {
      leave_if_broken();
      notify_host();  // only the host can make room: it must be awake for that
      doorbell_owed_ = false;
      sleep_until_woken(clock::now() + std::chrono::milliseconds(100), true);
      continue;
    }
    const std::size_t from_head = std::min(n, head.size());
    head = head.subspan(from_head);
    payload = payload.subspan(n - from_head);
    if (wake) notify_host();
  }
}

int uplink::frames_waiting() const {
  const std::size_t total = in_.readable();
  if (total == 0) return 0;
  const auto bytes = in_.peek();
  protocol::frame_header next;
  if (bytes.size() < sizeof next) return 1;  // its header wraps around the ring: say one
  std::memcpy(&next, bytes.data(), sizeof next);
  return total > sizeof next + next.payload_size ? 2 : 1;
}

bool uplink::next_frame(protocol::frame_header& header, byte_buffer& payload, bool announce_waiting,
                        clock::time_point until) {
  // The hot-poll window starts at the first clock reading (every 32nd idle round): a call that
  // arrives sooner is served without reading the clock at all (a reading costs ~25 ns).
  auto spin_until = clock::time_point::max();
  bool announced = false;
  idle_backoff backoff;
  for (unsigned round = 1;; ++round) {
    if (decoder_.ready()) {
      decoder_.take(header, payload);
      return true;
    }
    auto bytes = in_.peek();
    if (!bytes.empty()) {
      in_.consume(decoder_.feed(bytes.data(), bytes.size()));
      notify_host_of_room();
      continue;
    }
    if (doorbell_owed_.exchange(false)) notify_host();  // out of work: the host must see every result
    leave_if_broken();
    backoff.pause();
    if (round % 32 != 0) continue;  // the clock costs as much as a poll: read it now and then
    const auto now = clock::now();
    if (now >= until) return false;
    if (spin_until == clock::time_point::max()) spin_until = now + hot_poll_;
    if (now < spin_until) continue;
    if (announce_waiting && !announced) {
      announced = true;
      send(protocol::frame_header{.kind = protocol::frame_kind::waiting}, {});
    }
    sleep_until_woken(until, false);
  }
}

void uplink::serve(const protocol::frame_header& call, byte_buffer&& payload) {
  const auto started = tick_clock::now();
  protocol::served out = protocol::serve_call(call.function_id, call.fingerprint, payload.span(), std::move(spare_result_));
  protocol::frame_header reply;
  reply.kind = protocol::frame_kind::result;
  reply.call_id = call.call_id;
  reply.flags = served_++ == 0 ? protocol::flag_cold : 0;
  if (out.code == protocol::status::ok && out.result.size() > max_payload_) {
    // Refused here, at once: the host would take a frame over its limit for a broken worker.
    out.code = protocol::status::too_large;
    out.error_message = "cppless: result of " + std::to_string(out.result.size()) +
                        " bytes exceeds the limit of " + std::to_string(max_payload_) +
                        " bytes (local_options::max_payload)";
    out.result = byte_buffer();
  }
  if (out.code != protocol::status::ok) {
    out.result.clear();
    protocol::encode_failure(out.code, out.error_type, out.error_message, out.result);
  }
  reply.code = out.code;
  reply.exec_ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(tick_clock::now() - started).count());
  reply.payload_size = static_cast<std::uint32_t>(out.result.size());
  // With two more calls or more waiting here, a sleeping host need not wake for this result
  // yet: this worker is busy for at least one more call, and rings when one is left (or when it
  // runs out of work). Held calls (prefetch >= 2) so cost the host half the wake-ups or fewer.
  const bool defer = shared_.header().host_sleeping.load(std::memory_order_relaxed) && frames_waiting() >= 2;
  send(reply, out.result.span(), !defer);
  doorbell_owed_.store(defer);
  // The next result is encoded into this buffer, unless it grew big (see frame_decoder::take).
  if (out.result.capacity() <= (std::size_t{1} << 20)) spare_result_ = std::move(out.result);
}

void uplink::deliver(const protocol::frame_header& header, byte_buffer&& payload) {
  auto it = nested_.find(header.call_id);
  if (it == nested_.end()) return;  // its instance is gone
  completion done = std::move(it->second);
  nested_.erase(it);
  outcome result;
  result.stats.cold = (header.flags & protocol::flag_cold) != 0;
  result.stats.execution = std::chrono::nanoseconds(header.exec_ns);
  if (header.code == protocol::status::ok) result.result = std::move(payload);
  else result.error = protocol::error_from(header.code, payload.span(), "nested call");
  done(std::move(result));
}

void uplink::submit(invocation&& call, completion done) {
  protocol::frame_header h;
  h.kind = protocol::frame_kind::call;
  h.call_id = next_nested_id_++;
  h.function_id = call.function_id;
  h.fingerprint = call.fingerprint;
  h.payload_size = static_cast<std::uint32_t>(call.payload.size());
  if (call.payload.size() > max_payload_)
    throw payload_too_large("cppless: nested call payload of " + std::to_string(call.payload.size()) + " bytes for " +
                            call.function_name + " exceeds the limit of " + std::to_string(max_payload_) +
                            " bytes (local_options::max_payload)");
  nested_.emplace(h.call_id, std::move(done));
  send(h, call.payload.span());
}

void uplink::progress(std::unique_lock<std::mutex>& lock, clock::time_point until) {
  protocol::frame_header h;
  byte_buffer payload;
  lock.unlock();
  const bool got = next_frame(h, payload, true, until);
  if (got && h.kind == protocol::frame_kind::call) {
    // Out of turn: the host may think this call is still held behind the one that waits here.
    // It must know before the function runs (if this process dies now, the call may have run).
    send(protocol::frame_header{.kind = protocol::frame_kind::started, .call_id = h.call_id}, {});
    serve(h, std::move(payload));  // user code: unlocked
  }
  lock.lock();
  if (!got) return;
  if (h.kind == protocol::frame_kind::result) deliver(h, std::move(payload));
  else if (h.kind == protocol::frame_kind::shutdown) std::_Exit(worker_exit::clean);
}

int uplink::serve_forever() {
  byte_buffer payload;  // the same buffer every time: the decoder trades it for each frame's
  for (;;) {
    protocol::frame_header h;
    next_frame(h, payload, false, clock::time_point::max());
    switch (h.kind) {
      case protocol::frame_kind::call: serve(h, std::move(payload)); break;
      case protocol::frame_kind::result: {
        std::unique_lock lock(mutex());
        deliver(h, std::move(payload));
        break;
      }
      case protocol::frame_kind::shutdown: return worker_exit::clean;
      case protocol::frame_kind::waiting:
      case protocol::frame_kind::started: return worker_exit::protocol_violation;  // only workers send these
    }
  }
}

// Entered from worker_main when CPPLESS_WORKER is set:
// "region_fd:doorbell_fd:hot_poll_us:host_pid:max_payload".
int run_worker(const char* setting) {
  int region_fd = -1, doorbell = -1;
  long long hot_poll_us = 0, host = 0;
  unsigned long long max_payload = 0;
  if (std::sscanf(setting, "%d:%d:%lld:%lld:%llu", &region_fd, &doorbell, &hot_poll_us, &host, &max_payload) != 5 ||
      max_payload == 0 || max_payload > protocol::max_payload) {
    std::fprintf(stderr, "cppless worker: malformed CPPLESS_WORKER setting '%s'\n", setting);
    return worker_exit::bad_setup;
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != static_cast<pid_t>(host)) return worker_exit::clean;  // the host died before we got here
  try {
    const worker_settings settings{std::chrono::microseconds(hot_poll_us), static_cast<std::size_t>(max_payload)};
    auto link = std::make_shared<uplink>(region::attach(region_fd), doorbell, settings, static_cast<pid_t>(host));
    uplink_slot() = link;
    return link->serve_forever();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cppless worker: %s\n", e.what());
    return worker_exit::bad_setup;
  }
}

}  // namespace cppless::local
