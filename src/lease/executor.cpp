#include "executor.hpp"

#include <cppless/error.hpp>

#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace cppless::lease_detail {

namespace {
std::shared_ptr<executor_link>& link_slot() {
  static std::shared_ptr<executor_link> slot;
  return slot;
}

[[noreturn]] void client_gone() {
  // Nobody wants our results any more; the manager notices the exit and accounts for it.
  std::_Exit(0);
}
}  // namespace

std::shared_ptr<executor_link> current_executor_link() { return link_slot(); }

executor_link::executor_link(int socket, lease::executor_counters* counters, lease::core_table* cores, unsigned core,
                             std::chrono::microseconds hot_poll, bool warm)
    : fd_(socket),
      counters_(counters),
      cores_(cores),
      core_(core),
      hot_poll_(hot_poll),
      warm_(warm),
      self_(static_cast<std::uint32_t>(::getpid())),
      inbuf_(256 * 1024) {}

void executor_link::send(const protocol::frame_header& header, std::span<const std::byte> payload) {
  std::lock_guard guard(send_mutex_);
  std::size_t sent = 0;
  const std::size_t total = sizeof header + payload.size();
  while (sent < total) {
    iovec iov[2];
    int n_iov = 0;
    if (sent < sizeof header) iov[n_iov++] = {const_cast<char*>(reinterpret_cast<const char*>(&header)) + sent, sizeof header - sent};
    const std::size_t body_done = sent > sizeof header ? sent - sizeof header : 0;
    if (payload.size() > body_done) iov[n_iov++] = {const_cast<std::byte*>(payload.data()) + body_done, payload.size() - body_done};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<std::size_t>(n_iov);
    const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      pollfd p{fd_, POLLOUT, 0};
      ::poll(&p, 1, 1000);
      continue;
    }
    client_gone();
  }
}

bool executor_link::next_frame(protocol::frame_header& header, byte_buffer& payload, bool announce_waiting,
                               clock::time_point until) {
  clock::time_point spin_start{};
  unsigned idle_rounds = 0;
  bool announced = false;
  auto account_spin = [&](clock::time_point now) {
    if (spin_start == clock::time_point{}) return;
    const auto spun = std::min<clock::duration>(now - spin_start, hot_poll_);
    counters_->hot_poll_ns.fetch_add(static_cast<std::uint64_t>(std::chrono::nanoseconds(spun).count()),
                                     std::memory_order_relaxed);
    spin_start = {};
  };
  for (;;) {
    if (decoder_.ready()) {
      decoder_.take(header, payload);
      return true;
    }
    if (in_pos_ < in_len_) {
      in_pos_ += decoder_.feed(inbuf_.data() + in_pos_, in_len_ - in_pos_);
      continue;
    }
    const ssize_t n = ::recv(fd_, inbuf_.data(), inbuf_.size(), MSG_DONTWAIT);
    if (n > 0) {
      if (spin_start != clock::time_point{}) account_spin(clock::now());
      in_pos_ = 0;
      in_len_ = static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) client_gone();
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) client_gone();
    const auto now = clock::now();
    if (now >= until) {
      account_spin(now);
      return false;
    }
    // Hot: poll the socket for the hot-poll window, then block (warm executors block at once).
    // Past the first rounds, each round yields: a client (or anything) sharing this core runs
    // at once instead of waiting for the end of our time slice.
    if (hot_poll_.count() > 0) {
      if (spin_start == clock::time_point{}) {
        spin_start = now;
        idle_rounds = 0;
      }
      if (now - spin_start < hot_poll_) {
        if (++idle_rounds > 64) ::sched_yield();
        continue;
      }
    }
    account_spin(now);
    if (announce_waiting && !announced) {
      announced = true;
      send(protocol::frame_header{.kind = protocol::frame_kind::waiting}, {});
    }
    pollfd p{fd_, POLLIN, 0};
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
    ::poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 1, 1000)));
  }
}

void executor_link::serve(const protocol::frame_header& call, byte_buffer&& payload) {
  // A warm executor shares its core: it takes a call only while it holds the core, and refuses
  // one at once when another executor runs there (the client sends it elsewhere).
  bool took_core = false;
  if (warm_) {
    std::uint32_t expected = 0;
    auto& flag = cores_->busy[core_];
    if (holding_core_ == 0) {
      if (!flag.compare_exchange_strong(expected, self_) && expected != self_) {
        counters_->rejected.fetch_add(1, std::memory_order_relaxed);
        protocol::frame_header refusal;
        refusal.kind = protocol::frame_kind::result;
        refusal.call_id = call.call_id;
        refusal.code = protocol::status::protocol_failure;
        refusal.flags = lease::flag_rejected;
        send(refusal, {});
        return;
      }
    }
    ++holding_core_;
    took_core = true;
  }
  const auto started = clock::now();
  protocol::served out = protocol::serve_call(call.function_id, call.fingerprint, payload.span(), std::move(spare_result_));
  const auto exec = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - started);
  if (took_core && --holding_core_ == 0) cores_->busy[core_].store(0);
  counters_->compute_ns.fetch_add(static_cast<std::uint64_t>(exec.count()), std::memory_order_relaxed);
  counters_->calls.fetch_add(1, std::memory_order_relaxed);
  protocol::frame_header reply;
  reply.kind = protocol::frame_kind::result;
  reply.call_id = call.call_id;
  reply.code = out.code;
  reply.flags = served_++ == 0 ? protocol::flag_cold : 0;
  if (out.code != protocol::status::ok) {
    out.result.clear();
    protocol::encode_failure(out.code, out.error_type, out.error_message, out.result);
  }
  reply.exec_ns = static_cast<std::uint64_t>(exec.count());
  reply.payload_size = static_cast<std::uint32_t>(out.result.size());
  send(reply, out.result.span());
  if (out.result.capacity() <= (std::size_t{1} << 20)) spare_result_ = std::move(out.result);
}

void executor_link::deliver(const protocol::frame_header& header, byte_buffer&& payload) {
  auto it = nested_.find(header.call_id);
  if (it == nested_.end()) return;
  completion done = std::move(it->second);
  nested_.erase(it);
  outcome result;
  result.stats.cold = (header.flags & protocol::flag_cold) != 0;
  result.stats.execution = std::chrono::nanoseconds(header.exec_ns);
  if (header.code == protocol::status::ok) result.result = std::move(payload);
  else result.error = protocol::error_from(header.code, payload.span(), "nested call");
  done(std::move(result));
}

void executor_link::submit(invocation&& call, completion done) {
  if (call.payload.size() > protocol::max_payload)
    throw payload_too_large("cppless: nested call payload of " + std::to_string(call.payload.size()) + " bytes is too large");
  protocol::frame_header h;
  h.kind = protocol::frame_kind::call;
  h.call_id = next_nested_id_++;
  h.function_id = call.function_id;
  h.fingerprint = call.fingerprint;
  h.payload_size = static_cast<std::uint32_t>(call.payload.size());
  nested_.emplace(h.call_id, std::move(done));
  send(h, call.payload.span());
}

void executor_link::progress(std::unique_lock<std::mutex>& lock, clock::time_point until) {
  protocol::frame_header h;
  byte_buffer payload;
  lock.unlock();
  const bool got = next_frame(h, payload, true, until);
  if (got && h.kind == protocol::frame_kind::call) serve(h, std::move(payload));  // user code: unlocked
  lock.lock();
  if (!got) return;
  if (h.kind == protocol::frame_kind::result) deliver(h, std::move(payload));
  else if (h.kind == protocol::frame_kind::shutdown) std::_Exit(0);
}

int executor_link::serve_forever() {
  byte_buffer payload;
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
      case protocol::frame_kind::shutdown: return 0;
      case protocol::frame_kind::waiting: return 3;
    }
  }
}

std::optional<int> executor_mode(int, char**) {
  const char* setting = std::getenv(lease::executor_variable);
  if (!setting || !*setting) return std::nullopt;
  int sock = -1, stats = -1, cores = -1;
  unsigned core = 0;
  long long hot_poll_us = 0;
  char mode[8] = {};
  if (std::sscanf(setting, "%d:%d:%d:%u:%lld:%7s", &sock, &stats, &cores, &core, &hot_poll_us, mode) != 6 ||
      core >= lease::max_cores) {
    std::fprintf(stderr, "cppless executor: malformed %s setting '%s'\n", lease::executor_variable, setting);
    return 2;
  }
  ::unsetenv(lease::executor_variable);  // programs a function starts are not executors
  void* counters = ::mmap(nullptr, sizeof(lease::executor_counters), PROT_READ | PROT_WRITE, MAP_SHARED, stats, 0);
  void* table = ::mmap(nullptr, sizeof(lease::core_table), PROT_READ | PROT_WRITE, MAP_SHARED, cores, 0);
  if (counters == MAP_FAILED || table == MAP_FAILED) {
    std::fprintf(stderr, "cppless executor: cannot map the manager's counters\n");
    return 2;
  }
  ::close(stats);
  ::close(cores);
  try {
    auto link = std::make_shared<executor_link>(sock, static_cast<lease::executor_counters*>(counters),
                                                static_cast<lease::core_table*>(table), core,
                                                std::chrono::microseconds(hot_poll_us), std::string(mode) == "warm");
    link_slot() = link;
    return link->serve_forever();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cppless executor: %s\n", e.what());
    return 2;
  }
}

}  // namespace cppless::lease_detail
