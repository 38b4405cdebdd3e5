#include "local_pool.hpp"

#include "tick_clock.hpp"

#include <cppless/entry.hpp>
#include <cppless/error.hpp>

#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>

namespace cppless::local {

namespace {
constexpr std::uint64_t doorbell_tag = 0;  // epoll data of the doorbell; workers use generations >= 1

std::string seconds(unsigned s) { return std::to_string(s) + " s"; }

// Time points here come from steady_clock and from tick_clock (the hot path's), which agree to
// microseconds: a duration between a point of each is clamped, never reported negative.
std::chrono::nanoseconds elapsed(clock::time_point from, clock::time_point to) {
  return std::max(std::chrono::nanoseconds(0), std::chrono::duration_cast<std::chrono::nanoseconds>(to - from));
}
}  // namespace

local_pool::local_pool(local_options options) : options_(options) {
  if (options_.max_payload == 0 || options_.max_payload > protocol::max_payload)
    throw error("cppless local: local_options::max_payload must be from 1 byte to " +
                std::to_string(protocol::max_payload) + " bytes (a frame's limit), not " +
                std::to_string(options_.max_payload));
  cores_ = std::max(1u, std::thread::hardware_concurrency());
  max_workers_ = options_.workers ? options_.workers : cores_;
  doorbell_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (doorbell_ < 0 || epoll_ < 0) {
    const int err = errno;
    if (doorbell_ >= 0) ::close(doorbell_);
    if (epoll_ >= 0) ::close(epoll_);
    throw error(std::string("cppless local: eventfd/epoll: ") + std::strerror(err));
  }
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = doorbell_tag;
  if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, doorbell_, &ev) != 0) {
    const int err = errno;
    ::close(epoll_);
    ::close(doorbell_);
    throw error(std::string("cppless local: epoll_ctl: ") + std::strerror(err));
  }
}

local_pool::~local_pool() {
  std::unique_lock lock(mutex());
  for (auto& w : workers_) {
    send(*w, protocol::frame_header{.kind = protocol::frame_kind::shutdown}, byte_buffer());
  }
  // Give workers a moment to leave on their own, then make sure.
  const auto give_up = clock::now() + std::chrono::milliseconds(200);
  while (!workers_.empty() && clock::now() < give_up) handle_events(10, nullptr);
  for (auto& w : workers_) ::kill(w->process.pid, SIGKILL);
  for (auto& w : workers_) {
    reap_worker(w->process);
    ::close(w->process.pidfd);
  }
  workers_.clear();
  ::close(epoll_);
  ::close(doorbell_);
}

unsigned local_pool::alive() {
  std::unique_lock lock(mutex());
  return static_cast<unsigned>(workers_.size());
}

unsigned local_pool::started() {
  std::unique_lock lock(mutex());
  return started_;
}

void local_pool::admit(std::unique_lock<std::mutex>& lock, std::size_t payload_bytes) {
  const std::size_t limit = options_.max_queued_bytes;
  auto room = [&] { return limit == 0 || held_bytes_ == 0 || held_bytes_ + payload_bytes <= limit; };
  if (room()) return;
  if (options_.when_full == local_options::queue_full_policy::fail)
    throw queue_full("cppless local: " + std::to_string(held_bytes_) + " payload bytes wait for workers; " +
                     std::to_string(payload_bytes) + " more would pass local_options::max_queued_bytes (" +
                     std::to_string(limit) + ")");
  drive_until(lock, room);
}

void local_pool::submit(invocation&& work, completion done) {
  if (work.payload.size() > options_.max_payload)
    throw payload_too_large("cppless local: payload of " + std::to_string(work.payload.size()) +
                            " bytes for " + work.function_name + " exceeds the limit of " +
                            std::to_string(options_.max_payload) + " bytes (local_options::max_payload)");
  call c;
  c.work = std::move(work);
  c.done = std::move(done);
  c.submitted = tick_clock::now();
  const auto now = c.submitted;
  enqueue(std::move(c), false);
  schedule(now);
  // A driver asleep in epoll would not see a worker started by this thread: wake it.
  if (sleeping_) {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(doorbell_, &one, sizeof one);
  }
}

std::uint64_t local_pool::enqueue(call&& c, bool urgent) {
  hold_bytes(c.work.payload.size());
  const std::uint64_t id = calls_.insert(std::move(c));
  // Nested calls go first: depth-first order finishes the callers that wait for them sooner.
  if (urgent) queue_.push_front(id);
  else queue_.push_back(id);
  return id;
}

local_pool::worker* local_pool::pick_worker() {
  worker* best = nullptr;
  for (auto& w : workers_) {
    if (w->retiring || w->killed) continue;
    if (options_.mode == local_options::start_mode::cold && (w->served > 0 || !w->running.empty())) continue;
    if (w->running.empty()) return w.get();
    if (w->waiting && w->running.size() < options_.max_nesting && (!best || w->running.size() < best->running.size()))
      best = w.get();
  }
  return best;
}

local_pool::worker* local_pool::pick_prefetch_worker() {
  if (options_.prefetch == 0 || options_.mode == local_options::start_mode::cold) return nullptr;
  worker* best = nullptr;
  for (auto& w : workers_) {
    if (w->retiring || w->killed || w->waiting || w->running.size() > options_.prefetch) continue;
    if (!best || w->running.size() < best->running.size()) best = w.get();
  }
  return best;
}

bool local_pool::workers_fed() const {
  // A sleeping host wakes in 5-50 us (an idle virtual CPU takes the longest): with shorter calls
  // a worker would finish its held call before the host refilled it, and sit idle.
  constexpr double wake_up_ns = 50'000;
  if (options_.prefetch == 0 || workers_.size() < cores_ || mean_exec_ns_ < wake_up_ns) return false;
  for (auto& w : workers_)
    if (w->running.size() < 2 || w->waiting) return false;
  return true;
}

void local_pool::started_next(worker& w, clock::time_point now) {
  if (!w.running.empty()) start(calls_.at(w.running.front()), now);
}

void local_pool::start(call& c, clock::time_point now) {
  if (!c.prefetched) return;
  c.prefetched = false;
  c.assigned = now;
  if (c.work.config.timeout_s) c.deadline = now + std::chrono::seconds(c.work.config.timeout_s);
  release_bytes(c.work.payload.size());
  c.work.payload = byte_buffer();  // it will never be sent again
}

local_pool::worker* local_pool::spawn() {
  auto w = std::make_unique<worker>();
  w->shared = region::create();
  w->process = spawn_worker(w->shared.fd(), doorbell_, worker_settings{options_.hot_poll, options_.max_payload});
  w->decoder = protocol::frame_decoder(options_.max_payload);
  w->generation = next_generation_++;
  ++started_;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = w->generation;
  if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, w->process.pidfd, &ev) != 0) {
    const int err = errno;
    ::kill(w->process.pid, SIGKILL);
    reap_worker(w->process);
    ::close(w->process.pidfd);
    throw worker_crashed(std::string("cppless local: cannot watch a new worker (epoll_ctl): ") + std::strerror(err));
  }
  // A host already asleep must be woken by this worker too.
  w->shared.header().host_sleeping.store(sleeping_ ? 1 : 0);
  workers_.push_back(std::move(w));
  return workers_.back().get();
}

void local_pool::schedule(clock::time_point now) {
  while (!queue_.empty()) {
    worker* w = pick_worker();
    if (!w && workers_.size() >= max_workers_) w = pick_prefetch_worker();
    if (!w) {
      if (workers_.size() >= max_workers_) return;
      try {
        w = spawn();
      } catch (const std::exception& e) {
        const std::uint64_t id = queue_.front();
        queue_.pop_front();
        outcome failed;
        failed.error = std::make_exception_ptr(worker_crashed(e.what()));
        finish(id, std::move(failed));
        continue;
      }
    }
    const std::uint64_t id = queue_.front();
    queue_.pop_front();
    if (now == clock::time_point{}) now = clock::now();
    assign(id, *w, now);
  }
}

void local_pool::assign(std::uint64_t id, worker& w, clock::time_point now) {
  call& c = calls_.at(id);
  c.assigned = now;
  c.runner = w.generation;
  // Behind a call the worker is running: it starts when that one ends, or earlier if the worker
  // waits for nested calls meanwhile (it reports that with a `started` frame).
  c.prefetched = !w.running.empty();
  c.deadline = clock::time_point::max();
  if (c.work.config.timeout_s && !c.prefetched) c.deadline = c.assigned + std::chrono::seconds(c.work.config.timeout_s);
  w.running.push_back(id);
  w.waiting = false;
  protocol::frame_header h;
  h.kind = protocol::frame_kind::call;
  h.call_id = id;
  h.function_id = c.work.function_id;
  h.fingerprint = c.work.fingerprint;
  h.payload_size = static_cast<std::uint32_t>(c.work.payload.size());  // <= max_payload <= 1 GiB
  if (c.prefetched) {
    send_frame(w, h, c.work.payload.span(), nullptr);  // kept in case it must move on
  } else {
    release_bytes(c.work.payload.size());
    send(w, h, std::move(c.work.payload));
  }
}

void local_pool::send(worker& w, const protocol::frame_header& header, byte_buffer&& payload) {
  send_frame(w, header, payload.span(), &payload);
}

void local_pool::send_frame(worker& w, const protocol::frame_header& header, std::span<const std::byte> payload,
                            byte_buffer* owned) {
  // The usual case: nothing queued and the frame fits, so it goes straight into the ring.
  std::size_t sent = 0;
  if (w.outbound.empty()) {
    sent = w.shared.to_worker().write_some({reinterpret_cast<const std::byte*>(&header), sizeof header}, payload);
    if (sent > 0) notify_worker(w);
    if (sent == sizeof header + payload.size()) return;
  }
  // The rest waits for room, in bytes of its own: the caller's buffer, or a copy.
  byte_buffer rest;
  if (owned) rest = std::move(*owned);
  else rest.append(payload.data(), payload.size());
  hold_bytes(rest.size());
  w.outbound.push_back(outgoing{header, std::move(rest), sent});
  flush(w);
}

bool local_pool::flush(worker& w) {
  ring out = w.shared.to_worker();
  bool wrote = false;
  constexpr std::size_t header_size = sizeof(protocol::frame_header);
  while (!w.outbound.empty()) {
    outgoing& o = w.outbound.front();
    const std::size_t total = header_size + o.payload.size();
    const auto* header = reinterpret_cast<const std::byte*>(&o.header);
    std::span<const std::byte> head{}, body = o.payload.span();
    if (o.sent < header_size) head = {header + o.sent, header_size - o.sent};
    else body = body.subspan(o.sent - header_size);
    const std::size_t n = out.write_some(head, body);
    o.sent += n;
    wrote |= n > 0;
    if (o.sent < total) break;
    release_bytes(o.payload.size());
    w.outbound.pop_front();
  }
  if (wrote) notify_worker(w);
  return wrote;
}

void local_pool::notify_worker(worker& w) {
  region_header& h = w.shared.header();
  if (h.worker_sleeping.load(std::memory_order_seq_cst)) {
    h.worker_seq.fetch_add(1, std::memory_order_seq_cst);
    futex_wake_all(h.worker_seq);
  }
}

bool local_pool::read(worker& w) {
  if (w.corrupt) return false;
  ring in = w.shared.to_host();
  bool got = false;
  for (;;) {
    auto bytes = in.peek();
    if (bytes.empty()) break;
    got = true;
    std::size_t used = 0;
    try {
      used = w.decoder.feed(bytes.data(), bytes.size());
    } catch (const std::exception& e) {
      w.corrupt = true;  // a worker that breaks the protocol is replaced
      kill_worker(w, std::string("it sent a corrupt frame (") + e.what() + ")");
      break;
    }
    in.consume(used);
    if (w.decoder.ready()) {
      protocol::frame_header h;
      byte_buffer payload;
      w.decoder.take(h, payload);
      handle_frame(w, h, std::move(payload));
    }
  }
  if (got) notify_worker(w);  // it may be waiting for room to write
  return got;
}

void local_pool::handle_frame(worker& w, const protocol::frame_header& h, byte_buffer&& payload) {
  using protocol::frame_kind;
  switch (h.kind) {
    case frame_kind::result: {
      auto it = std::find(w.running.begin(), w.running.end(), h.call_id);
      if (it == w.running.end()) return;  // e.g. already failed by its timeout: it stays failed
      w.running.erase(it);
      const bool cold = (h.flags & protocol::flag_cold) != 0;
      ++w.served;
      call& c = calls_.at(h.call_id);
      outcome result;
      const auto now = tick_clock::now();
      started_next(w, now);
      result.stats.cold = cold;
      result.stats.worker = w.process.pid;
      // "w<pid>-<n>", built in place: this runs once per call on the host's hot path.
      char id[32] = "w";
      char* end = std::to_chars(id + 1, id + 16, w.process.pid).ptr;
      *end++ = '-';
      end = std::to_chars(end, id + sizeof id, w.served).ptr;
      result.stats.invocation_id.assign(id, end);
      result.stats.queued = elapsed(c.submitted, c.assigned);
      result.stats.execution = std::chrono::nanoseconds(h.exec_ns);
      mean_exec_ns_ += (static_cast<double>(h.exec_ns) - mean_exec_ns_) / 8;
      result.stats.round_trip = elapsed(c.submitted, now);
      const auto limit = std::chrono::seconds(c.work.config.timeout_s);
      if (c.work.config.timeout_s && result.stats.execution > limit) {
        // It ran past its timeout before the host noticed (the host was not driving then): a
        // timeout all the same, whichever side saw it first. The worker itself is healthy.
        result.error = std::make_exception_ptr(timeout_error(
            "cppless: call to " + std::string(c.work.function_name) + " ran for " +
            std::to_string(std::chrono::duration<double>(result.stats.execution).count()) +
            " s, past its timeout of " + seconds(c.work.config.timeout_s) + "; its result was discarded"));
      } else if (h.code == protocol::status::ok) {
        result.result = std::move(payload);
      } else {
        result.error = protocol::error_from(h.code, payload.span(), c.work.function_name);
      }
      finish(h.call_id, std::move(result));
      if (options_.mode == local_options::start_mode::cold && w.running.empty() && !w.retiring) {
        w.retiring = true;
        send(w, protocol::frame_header{.kind = frame_kind::shutdown}, byte_buffer());
      }
      return;
    }
    case frame_kind::call: {  // a nested dispatch from inside a function
      call c;
      c.work.function_id = h.function_id;
      c.work.fingerprint = h.fingerprint;
      c.work.function_name = "nested call";
      c.work.payload = std::move(payload);
      c.owner_generation = w.generation;
      c.owner_call_id = h.call_id;
      c.submitted = clock::now();
      // The timeout of a nested call is known to the worker's entry table, not the host's:
      // look it up in ours (same executable).
      if (const entry* e = registry::global().find(h.function_id)) {
        c.work.config = e->config;
        c.work.function_name = e->name.c_str();
      }
      enqueue(std::move(c), true);
      return;
    }
    case frame_kind::waiting:
      w.waiting = true;
      return;
    case frame_kind::started:  // a call it held, started out of turn inside a nested wait
      if (std::find(w.running.begin(), w.running.end(), h.call_id) != w.running.end())
        start(calls_.at(h.call_id), clock::now());
      return;
    case frame_kind::shutdown:
      ::kill(w.process.pid, SIGKILL);
      return;
  }
}

void local_pool::finish(std::uint64_t id, outcome&& result) {
  std::optional<call> taken = calls_.take(id);
  if (!taken) return;
  call& c = *taken;
  release_bytes(c.work.payload.size());
  if (c.owner_generation == 0) {
    ++completions_;
    if (c.done) c.done(std::move(result));
    return;
  }
  worker* owner = find_worker(c.owner_generation);
  if (!owner) return;  // the caller's worker died; its own call has failed already
  protocol::frame_header h;
  h.kind = protocol::frame_kind::result;
  h.call_id = c.owner_call_id;
  h.exec_ns = static_cast<std::uint64_t>(result.stats.execution.count());
  h.flags = result.stats.cold ? protocol::flag_cold : 0;
  byte_buffer payload = std::move(result.result);
  if (result.error) {
    protocol::status code;
    protocol::encode_error(result.error, code, payload);
    h.code = code;
  }
  h.payload_size = static_cast<std::uint32_t>(payload.size());  // a worker's result (<= max_payload) or an error
  send(*owner, h, std::move(payload));
}

local_pool::worker* local_pool::find_worker(std::uint64_t generation) {
  for (auto& w : workers_)
    if (w->generation == generation) return w.get();
  return nullptr;
}

void local_pool::enforce_timeouts(clock::time_point now) {
  for (auto& w : workers_) {
    if (w->killed) continue;
    auto late = std::find_if(w->running.begin(), w->running.end(), [&](std::uint64_t id) { return calls_.at(id).deadline <= now; });
    if (late == w->running.end()) continue;
    const std::uint64_t id = *late;
    w->running.erase(late);
    call& c = calls_.at(id);
    const std::string fn = c.work.function_name;
    const std::string limit = seconds(c.work.config.timeout_s);
    kill_worker(*w, "call to " + fn + " on it exceeded its timeout of " + limit);
    // The timed-out call ends now, as a timeout, whatever the worker still sends before it dies.
    outcome failed;
    failed.stats.worker = w->process.pid;
    failed.stats.queued = elapsed(c.submitted, c.assigned);
    failed.stats.round_trip = elapsed(c.submitted, now);
    failed.error = std::make_exception_ptr(timeout_error("cppless: call to " + fn + " exceeded its timeout of " + limit +
                                                         "; worker " + std::to_string(w->process.pid) +
                                                         " was killed and will be replaced"));
    finish(id, std::move(failed));
  }
}

void local_pool::kill_worker(worker& w, std::string reason) {
  if (w.killed) return;
  w.killed = true;
  w.kill_reason = std::move(reason);
  ::kill(w.process.pid, SIGKILL);
}

bool local_pool::check_ring(worker& w) {
  if (!w.shared.broken()) return true;
  if (!w.corrupt) {
    w.corrupt = true;
    kill_worker(w, "it corrupted the shared memory it shares with the host: " + w.shared.broken_reason());
  }
  return false;
}

bool local_pool::step() {
  bool activity = false;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    worker& w = *workers_[i];
    activity |= flush(w);
    activity |= read(w);
    check_ring(w);
  }
  schedule();
  return activity;
}

void local_pool::housekeeping(clock::time_point now) {
  enforce_timeouts(now);
  // Deaths are reported through pidfds; look at them now and then even while busy.
  if (now - last_event_check_ > std::chrono::milliseconds(2)) {
    last_event_check_ = now;
    handle_events(0, nullptr);
  }
}

void local_pool::progress(std::unique_lock<std::mutex>& lock, clock::time_point until) {
  const std::uint64_t before = completions_;
  // Reading the clock costs as much as polling every ring once: do it every 32nd round only.
  // The hot-poll window starts at the first reading (a reply to a short call often comes
  // before it, and then the clock was never read).
  clock::time_point now, spin_until = clock::time_point::max();
  idle_backoff backoff;
  for (unsigned round = 1;; ++round) {
    const bool activity = step();
    if (completions_ != before) return;
    if (activity) backoff.reset();
    else backoff.pause();
    if (round % 32 != 0) continue;
    now = clock::now();
    housekeeping(now);
    if (completions_ != before || now >= until) return;
    if (activity || spin_until == clock::time_point::max()) {
      spin_until = now + options_.hot_poll;
      continue;
    }
    // Poll hot only while a core is left over: when long calls occupy every core, a polling
    // host would steal time from them, so it sleeps right away.
    // Nor does it poll when every worker already holds its next call.
    if (now < spin_until && computing_workers(now) < cores_ && !workers_fed()) continue;
    wait_for_events(lock, until);
    spin_until = clock::now() + options_.hot_poll;
  }
}

unsigned local_pool::computing_workers(clock::time_point now) const {
  unsigned computing = 0;
  for (auto& w : workers_) {
    if (w->running.empty() || w->waiting) continue;
    // Short calls (a stream of small ones) end within the poll window: polling pays off there.
    computing += calls_.at(w->running.front()).assigned + options_.hot_poll < now;
  }
  return computing;
}

void local_pool::wait_for_events(std::unique_lock<std::mutex>& lock, clock::time_point until) {
  clock::time_point wake = until;
  for (auto& w : workers_) {
    for (std::uint64_t id : w->running) wake = std::min(wake, calls_.at(id).deadline);
    // A worker with two frames or more behind the call it runs may hold back its doorbell for a
    // result until it is down to one (see uplink::serve): look at the rings at least every
    // millisecond then, so such a result is never withheld for long (the host may be waiting for
    // exactly it). With the default prefetch of 1 a worker holds one call at most: no such wake-ups.
    if (w->running.size() >= 3 || w->waiting) wake = std::min(wake, clock::now() + std::chrono::milliseconds(1));
  }
  for (auto& w : workers_) {
    w->shared.header().host_wants_room.store(w->outbound.empty() ? 0 : 1, std::memory_order_relaxed);
    w->shared.header().host_sleeping.store(1, std::memory_order_seq_cst);
  }
  sleeping_ = true;
  bool ready = false;
  for (auto& w : workers_) {
    if (w->shared.to_host().readable() > 0 || (!w->outbound.empty() && w->shared.to_worker().writable() > 0)) ready = true;
    check_ring(*w);
  }
  if (!ready) {
    auto ms = std::chrono::ceil<std::chrono::milliseconds>(wake - clock::now()).count();
    handle_events(static_cast<int>(std::clamp<long long>(ms, 0, 1000)), &lock);
  }
  sleeping_ = false;
  for (auto& w : workers_) w->shared.header().host_sleeping.store(0, std::memory_order_relaxed);
}

void local_pool::handle_events(int timeout_ms, std::unique_lock<std::mutex>* unlock_while_waiting) {
  epoll_event events[32];
  if (unlock_while_waiting) unlock_while_waiting->unlock();
  int n = ::epoll_wait(epoll_, events, 32, timeout_ms);
  if (unlock_while_waiting) unlock_while_waiting->lock();
  for (int i = 0; i < n; ++i) {
    if (events[i].data.u64 == doorbell_tag) {
      std::uint64_t count;
      while (::read(doorbell_, &count, sizeof count) > 0) {
      }
    } else {
      reap(events[i].data.u64);
    }
  }
}

void local_pool::reap(std::uint64_t generation) {
  auto it = std::find_if(workers_.begin(), workers_.end(), [&](auto& w) { return w->generation == generation; });
  if (it == workers_.end()) return;
  worker& w = **it;
  const std::string how = reap_worker(w.process);
  read(w);  // results it wrote before it ended still count
  check_ring(w);
  for (const outgoing& o : w.outbound) release_bytes(o.payload.size());
  // Calls it held but had certainly not started go to another worker, in their order.
  std::vector<std::uint64_t> never_started;
  std::erase_if(w.running, [&](std::uint64_t id) {
    call& c = calls_.at(id);
    if (!c.prefetched) return false;
    c.prefetched = false;
    c.runner = 0;
    never_started.push_back(id);
    return true;
  });
  queue_.insert(queue_.begin(), never_started.begin(), never_started.end());
  for (std::uint64_t id : w.running) {
    call& c = calls_.at(id);
    outcome failed;
    failed.stats.worker = w.process.pid;
    failed.stats.queued = elapsed(c.submitted, c.assigned);
    failed.stats.round_trip = elapsed(c.submitted, clock::now());
    const std::string fn = c.work.function_name;
    if (w.killed) {
      failed.error = std::make_exception_ptr(worker_crashed("cppless: worker " + std::to_string(w.process.pid) +
                                                            " running " + fn + " was killed because " +
                                                            w.kill_reason + "; it will be replaced"));
    } else {
      failed.error = std::make_exception_ptr(worker_crashed(
          "cppless: worker " + std::to_string(w.process.pid) + " died of " + (how.empty() ? "a clean exit" : how) +
          " while running " + fn + "; it will be replaced"));
    }
    finish(id, std::move(failed));
  }
  // Nested calls this worker was waiting for have nobody to return to.
  std::erase_if(queue_, [&](std::uint64_t id) {
    const call* c = calls_.find(id);
    if (!c || c->owner_generation != generation) return false;
    release_bytes(c->work.payload.size());
    calls_.erase(id);
    return true;
  });
  ::epoll_ctl(epoll_, EPOLL_CTL_DEL, w.process.pidfd, nullptr);
  ::close(w.process.pidfd);
  workers_.erase(it);
}

}  // namespace cppless::local
