#include "lease_client.hpp"

#include "executor_shared.hpp"
#include "rm_client.hpp"

#include <cppless/entry.hpp>
#include <cppless/error.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>

namespace cppless::lease_detail {

using nlohmann::json;
namespace net = lease::net;
using namespace std::chrono_literals;

namespace {

struct executable_info {
  std::string path, hash;
  std::uint64_t size = 0;
};

// The executable shipped to executors, hashed once per process and path.
executable_info executable(const std::string& wanted) {
  static std::mutex m;
  static std::unordered_map<std::string, executable_info> known;
  std::string path = wanted;
  if (path.empty()) {
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) throw error("cppless lease: cannot find this program's executable (/proc/self/exe)");
    path.assign(buf, static_cast<std::size_t>(n));
  }
  std::lock_guard lock(m);
  auto it = known.find(path);
  if (it != known.end()) return it->second;
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) throw error("cppless lease: cannot read the executable " + path);
  executable_info info{path, lease::sha256_hex_of_file(path), static_cast<std::uint64_t>(st.st_size)};
  known[path] = info;
  return info;
}

std::chrono::nanoseconds elapsed(clock::time_point a, clock::time_point b) {
  return b > a ? std::chrono::duration_cast<std::chrono::nanoseconds>(b - a) : std::chrono::nanoseconds(0);
}
}  // namespace

json lease_client::ask_resource_manager(const json& request) const {
  try {
    return lease::ask_as_user(net::parse_address(options_.resource_manager), options_.user, options_.secret, request,
                              options_.connect_timeout);
  } catch (const lease::refused& e) {
    throw lease_refused(std::string("cppless lease: resource manager: ") + e.what());
  } catch (const net::net_error& e) {
    throw error("cppless lease: resource manager " + options_.resource_manager + ": " + e.what());
  }
}

lease_client::lease_client(const lease_options& options, const lease_request& request)
    : options_(options), request_(request), inbuf_(256 * 1024) {
  if (options_.resource_manager.empty()) throw error("cppless lease: no resource manager (set CPPLESS_RESOURCE_MANAGER)");
  if (options_.user.empty() || options_.secret.empty())
    throw error("cppless lease: no user or secret (set CPPLESS_USER and CPPLESS_SECRET or CPPLESS_SECRET_FILE)");
  const auto info = executable(options_.executable);  // before the lease: a missing file costs nothing
  grant_ = ask_resource_manager({{"type", "lease"}, {"cores", request.cores}, {"memory_mb", request.memory_mb},
                                 {"duration_ms", request.duration.count()},
                                 {"mode", request.mode == lease_mode::hot ? "hot" : "warm"}});
  lease_id_ = grant_.at("lease").get<std::string>();
  const auto remaining = std::chrono::milliseconds(grant_.at("remaining_ms").get<std::int64_t>());
  expires_ = clock::now() + remaining;
  expires_wall_ = std::chrono::system_clock::now() + remaining;

  // One connection per core of the lease. The first one to each manager ships the executable if
  // it is not cached there; the others start together once it is.
  std::size_t total = 0;
  for (auto& part : grant_.at("parts")) total += part.at("cores").get<unsigned>();
  conns_.resize(total);
  std::vector<std::pair<const json*, std::size_t>> slots;
  for (auto& part : grant_.at("parts"))
    for (unsigned k = 0; k < part.at("cores").get<unsigned>(); ++k) slots.emplace_back(&part, slots.size());
  try {
    std::size_t at = 0, part_index = 0;
    for (auto& part : grant_.at("parts")) {
      for (unsigned k = 0; k < part.at("cores").get<unsigned>(); ++k) conns_[at + k].part = part_index;
      at += part.at("cores").get<unsigned>();
      ++part_index;
    }
    std::vector<std::future<void>> firsts;
    at = 0;
    for (auto& part : grant_.at("parts")) {
      firsts.push_back(std::async(std::launch::async, [this, &part, at] { open_executor(part, conns_[at]); }));
      at += part.at("cores").get<unsigned>();
    }
    std::exception_ptr first_error;
    for (auto& f : firsts) try {
        f.get();
      } catch (...) {
        if (!first_error) first_error = std::current_exception();
      }
    if (first_error) std::rethrow_exception(first_error);
    std::vector<std::future<void>> rest;
    at = 0;
    for (auto& part : grant_.at("parts")) {
      const unsigned n = part.at("cores").get<unsigned>();
      for (unsigned k = 1; k < n; ++k)
        rest.push_back(std::async(std::launch::async, [this, &part, i = at + k] { open_executor(part, conns_[i]); }));
      at += n;
    }
    for (auto& f : rest) try {
        f.get();
      } catch (...) {
        if (!first_error) first_error = std::current_exception();
      }
    if (first_error) std::rethrow_exception(first_error);
  } catch (...) {
    conns_.clear();
    try {
      ask_resource_manager({{"type", "release"}, {"lease", lease_id_}});
    } catch (...) {
    }
    throw;
  }
  (void)info;
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

void lease_client::open_executor(const json& part, connection& c) {
  const auto info = executable(options_.executable);
  const std::string where = part.at("address").get<std::string>();
  c.info.manager = part.at("manager").get<std::string>();
  c.info.address = where;
  try {
    c.fd = net::connect_to(net::parse_address(where), options_.connect_timeout);
    const auto until = net::after(options_.connect_timeout * 4);
    net::send_message(c.fd.get(),
                      {{"type", "executor"}, {"token", part.at("token")},
                       {"executable", {{"sha256", info.hash}, {"size", info.size}}}},
                      until);
    json first = net::receive_message(c.fd.get(), until);
    if (!first.value("ok", false))
      throw lease_refused("cppless lease: executor manager " + c.info.manager + " (" + where + "): " + first.value("error", "refused"));
    if (first.value("need_executable", false)) {
      // The file goes out as it is on disk (sendfile: no copy through this process).
      net::fd_handle file(::open(info.path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!file) throw error("cppless lease: cannot read " + info.path);
      off_t offset = 0;
      while (static_cast<std::uint64_t>(offset) < info.size) {
        const ssize_t n = ::sendfile(c.fd.get(), file.get(), &offset, info.size - static_cast<std::uint64_t>(offset));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw net::net_error(std::string("sending the executable failed: ") + std::strerror(errno));
      }
      c.info.shipped = true;
    }
    json started = net::receive_message(c.fd.get(), until);
    if (!started.value("ok", false))
      throw lease_refused("cppless lease: executor manager " + c.info.manager + " (" + where + "): " + started.value("error", "refused"));
    c.info.pid = started.value("pid", 0);
    c.info.cpu = started.value("cpu", -1);
    c.info.host = started.value("host", "");
    net::set_nonblocking(c.fd.get(), true);
  } catch (const net::net_error& e) {
    throw error("cppless lease: executor manager " + c.info.manager + " (" + where + "): " + e.what());
  }
}

lease_client::~lease_client() {
  release();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void lease_client::release() {
  std::vector<std::pair<completion, outcome>> orphans;
  {
    std::unique_lock lock(mutex());
    if (released_) return;
    released_ = true;
    for (std::size_t i = 0; i < conns_.size(); ++i)
      if (conns_[i].info.alive) lose(i, "the lease was released");
  }
  try {
    ask_resource_manager({{"type", "release"}, {"lease", lease_id_}});
  } catch (const std::exception&) {
    // The resource manager may be gone; the lease then simply expires.
  }
}

void lease_client::submit(invocation&& call_in, completion done) {
  const std::uint64_t id = next_id_++;
  call c;
  c.work = std::move(call_in);
  c.done = std::move(done);
  c.submitted = clock::now();
  if (c.work.payload.size() > protocol::max_payload) {
    calls_.emplace(id, std::move(c));
    fail(id, std::make_exception_ptr(payload_too_large("cppless lease: payload of " + std::to_string(calls_.at(id).work.payload.size()) +
                                                       " bytes exceeds the frame limit")));
    return;
  }
  calls_.emplace(id, std::move(c));
  queue_.push_back(id);
  if (released_ || !stranded_.empty()) {
    fail_queue_if_stranded();  // this call too: nothing is left to run it
    return;
  }
  schedule(c.submitted);
  if (sleeping_) {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  }
}

void lease_client::schedule(clock::time_point now) {
  if (now >= expires_) {
    enforce_deadlines(now);
    return;
  }
  while (!queue_.empty()) {
    // An idle executor (or one waiting for nested calls), round robin so calls spread.
    std::size_t pick = npos;
    for (std::size_t k = 0; k < conns_.size(); ++k) {
      const std::size_t i = (next_conn_ + k) % conns_.size();
      auto& c = conns_[i];
      if (!c.info.alive || (c.refused && now - c.refused_at < 1ms)) continue;
      if (c.running.empty() || c.waiting) {
        pick = i;
        break;
      }
    }
    if (pick == npos) return;
    next_conn_ = (pick + 1) % conns_.size();
    const std::uint64_t id = queue_.front();
    queue_.pop_front();
    assign(id, pick, now);
  }
}

void lease_client::assign(std::uint64_t id, std::size_t i, clock::time_point now) {
  call& c = calls_.at(id);
  c.runner = i;
  c.assigned = now;
  if (c.work.config.timeout_s > 0) c.deadline = now + std::chrono::seconds(c.work.config.timeout_s);
  conns_[i].running.push_back(id);
  protocol::frame_header h;
  h.kind = protocol::frame_kind::call;
  h.call_id = id;
  h.function_id = c.work.function_id;
  h.fingerprint = c.work.fingerprint;
  h.payload_size = static_cast<std::uint32_t>(c.work.payload.size());
  // The payload stays with the call (a refused call is sent again): the frame borrows it.
  outgoing o{h, byte_buffer(), 0};
  conns_[i].out.push_back(std::move(o));
  flush(i);
}

void lease_client::send(std::size_t i, const protocol::frame_header& header, byte_buffer&& payload) {
  conns_[i].out.push_back(outgoing{header, std::move(payload), 0});
  flush(i);
}

// Writes what the socket takes; false if the connection broke (it is then lost).
bool lease_client::flush(std::size_t i) {
  auto& c = conns_[i];
  while (c.info.alive && !c.out.empty()) {
    auto& o = c.out.front();
    std::span<const std::byte> body = o.payload.span();
    if (o.header.kind == protocol::frame_kind::call && o.header.payload_size != 0 && body.empty()) {
      auto it = calls_.find(o.header.call_id);
      if (it == calls_.end()) {  // failed meanwhile (and never started sending)
        c.out.pop_front();
        continue;
      }
      body = it->second.work.payload.span();
    }
    const std::size_t total = sizeof o.header + body.size();
    iovec iov[2];
    int n_iov = 0;
    if (o.sent < sizeof o.header)
      iov[n_iov++] = {reinterpret_cast<char*>(&o.header) + o.sent, sizeof o.header - o.sent};
    const std::size_t body_done = o.sent > sizeof o.header ? o.sent - sizeof o.header : 0;
    if (body.size() > body_done) iov[n_iov++] = {const_cast<std::byte*>(body.data()) + body_done, body.size() - body_done};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<std::size_t>(n_iov);
    const ssize_t n = ::sendmsg(c.fd.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return true;
      lose(i, std::string("connection to the executor broke: ") + std::strerror(errno));
      return false;
    }
    o.sent += static_cast<std::size_t>(n);
    if (o.sent < total) return true;
    c.out.pop_front();
  }
  return c.info.alive;
}

bool lease_client::pump() {
  bool any = false;
  for (std::size_t i = 0; i < conns_.size(); ++i) {
    auto& c = conns_[i];
    if (!c.info.alive) continue;
    if (!c.out.empty()) flush(i);
    while (c.info.alive) {
      const ssize_t n = ::recv(c.fd.get(), inbuf_.data(), inbuf_.size(), MSG_DONTWAIT);
      if (n > 0) {
        any = true;
        std::size_t used = 0;
        try {
          while (used < static_cast<std::size_t>(n) && conns_[i].info.alive) {
            used += conns_[i].decoder.feed(inbuf_.data() + used, static_cast<std::size_t>(n) - used);
            if (conns_[i].decoder.ready()) {
              protocol::frame_header h;
              byte_buffer payload;
              conns_[i].decoder.take(h, payload);
              handle_frame(i, h, std::move(payload));
            }
          }
        } catch (const std::exception& e) {
          lose(i, std::string("the executor broke the protocol: ") + e.what());
        }
        continue;
      }
      if (n == 0) {
        lose(i, "the executor closed its connection");
        any = true;
      } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        lose(i, std::string("connection to the executor failed: ") + std::strerror(errno));
        any = true;
      }
      break;
    }
  }
  return any;
}

void lease_client::handle_frame(std::size_t i, const protocol::frame_header& h, byte_buffer&& payload) {
  using protocol::frame_kind;
  auto& c = conns_[i];
  switch (h.kind) {
    case frame_kind::result: {
      auto it = std::find(c.running.begin(), c.running.end(), h.call_id);
      if (it == c.running.end()) return;  // e.g. already failed by its timeout
      c.running.erase(it);
      c.waiting = false;
      if (h.flags & lease::flag_rejected) {
        // Its core was busy: the call never ran. Send it elsewhere first thing.
        c.refused = true;
        c.refused_at = clock::now();
        calls_.at(h.call_id).runner = npos;
        calls_.at(h.call_id).deadline = clock::time_point::max();
        queue_.push_front(h.call_id);
        return;
      }
      for (auto& other : conns_) other.refused = false;  // a core was freed somewhere
      ++c.info.calls;
      call& work = calls_.at(h.call_id);
      outcome result;
      const auto now = clock::now();
      result.stats.cold = (h.flags & protocol::flag_cold) != 0;
      result.stats.worker = c.info.pid;
      result.stats.invocation_id = c.info.manager + "/" + c.info.host + "/cpu" + std::to_string(c.info.cpu) + "/e" +
                                   std::to_string(c.info.pid) + "-" + std::to_string(c.info.calls);
      result.stats.queued = elapsed(work.submitted, work.assigned);
      result.stats.execution = std::chrono::nanoseconds(h.exec_ns);
      result.stats.round_trip = elapsed(work.submitted, now);
      if (h.code == protocol::status::ok) result.result = std::move(payload);
      else result.error = protocol::error_from(h.code, payload.span(), work.work.function_name);
      finish(h.call_id, std::move(result));
      return;
    }
    case frame_kind::call: {  // nested dispatch from a function on that executor
      call n;
      n.work.function_id = h.function_id;
      n.work.fingerprint = h.fingerprint;
      n.work.function_name = "nested call";
      n.work.payload = std::move(payload);
      if (const entry* e = registry::global().find(h.function_id)) {
        n.work.config = e->config;
        n.work.function_name = e->name.c_str();
      }
      n.owner = i;
      n.owner_call_id = h.call_id;
      n.submitted = clock::now();
      const std::uint64_t id = next_id_++;
      calls_.emplace(id, std::move(n));
      queue_.push_front(id);
      return;
    }
    case frame_kind::waiting:
      c.waiting = true;
      return;
    case frame_kind::shutdown:
      lose(i, "the executor shut down");
      return;
    case frame_kind::started:  // executors start calls in the order sent (nothing is held): no news
      return;
  }
}

void lease_client::finish(std::uint64_t id, outcome&& result) {
  auto it = calls_.find(id);
  if (it == calls_.end()) return;
  call c = std::move(it->second);
  calls_.erase(it);
  if (c.owner != npos) {
    // A nested call: its result goes back to the executor waiting for it (if still there).
    if (c.owner >= conns_.size() || !conns_[c.owner].info.alive) return;
    protocol::frame_header h;
    h.kind = protocol::frame_kind::result;
    h.call_id = c.owner_call_id;
    h.exec_ns = static_cast<std::uint64_t>(result.stats.execution.count());
    h.flags = result.stats.cold ? protocol::flag_cold : 0;
    byte_buffer body;
    if (result.error) protocol::encode_error(result.error, h.code, body);
    else body = std::move(result.result);
    h.payload_size = static_cast<std::uint32_t>(body.size());
    send(c.owner, h, std::move(body));
    return;
  }
  ready_.emplace_back(std::move(c.done), std::move(result));
}

void lease_client::fail(std::uint64_t id, std::exception_ptr error) {
  outcome o;
  o.error = std::move(error);
  auto it = calls_.find(id);
  if (it != calls_.end()) o.stats.round_trip = elapsed(it->second.submitted, clock::now());
  finish(id, std::move(o));
}

std::exception_ptr lease_client::loss_error(const std::string& what) const {
  if (clock::now() + 200ms >= expires_)
    return std::make_exception_ptr(lease_expired("cppless lease: lease " + lease_id_ + " expired during the call (" + what + ")"));
  return std::make_exception_ptr(worker_crashed("cppless lease: " + what));
}

void lease_client::lose(std::size_t i, const std::string& why) {
  auto& c = conns_[i];
  if (!c.info.alive) return;
  c.info.alive = false;
  c.fd.reset();
  c.out.clear();
  const std::string what = "executor " + std::to_string(c.info.pid) + " on " + c.info.host + " (manager " + c.info.manager +
                           ", cpu " + std::to_string(c.info.cpu) + ") was lost: " + why;
  auto running = std::move(c.running);
  c.running.clear();
  for (auto id : running) {
    if (released_) fail(id, std::make_exception_ptr(lease_error("cppless lease: lease " + lease_id_ + " was released during the call")));
    else fail(id, loss_error(what));
  }
  // Nested calls of that executor still queued: nobody waits for them any more.
  std::erase_if(queue_, [&](std::uint64_t id) {
    auto it = calls_.find(id);
    if (it == calls_.end() || it->second.owner != i) return false;
    calls_.erase(it);
    return true;
  });
  replace(i);
  if (std::none_of(conns_.begin(), conns_.end(), [](const connection& x) { return x.info.alive; })) {
    stranded_ = what;
    fail_queue_if_stranded();
  }
}

void lease_client::replace(std::size_t i) {
  auto& c = conns_[i];
  if (released_ || clock::now() + 1s >= expires_ || c.replacements >= 3) return;
  ++c.replacements;
  connection fresh;
  fresh.part = c.part;
  fresh.replacements = c.replacements;
  fresh.info.calls = 0;
  try {
    // Its manager must be reachable at once; a dead one is not waited for.
    auto saved = options_.connect_timeout;
    options_.connect_timeout = std::min<std::chrono::milliseconds>(saved, 1s);
    struct restore {
      lease_options& o;
      std::chrono::milliseconds t;
      ~restore() { o.connect_timeout = t; }
    } guard{options_, saved};
    open_executor(grant_.at("parts").at(c.part), fresh);
  } catch (const std::exception&) {
    return;  // the slot stays empty
  }
  c = std::move(fresh);
}

void lease_client::fail_queue_if_stranded() {
  if (stranded_.empty() && !released_) return;
  auto queued = std::move(queue_);
  queue_.clear();
  for (auto id : queued) {
    if (released_) fail(id, std::make_exception_ptr(lease_error("cppless lease: lease " + lease_id_ + " was released")));
    else if (clock::now() + 200ms >= expires_)
      fail(id, std::make_exception_ptr(lease_expired("cppless lease: lease " + lease_id_ + " has expired")));
    else fail(id, std::make_exception_ptr(lease_error("cppless lease: no executor of lease " + lease_id_ + " is left (" + stranded_ + ")")));
  }
}

void lease_client::enforce_deadlines(clock::time_point now) {
  if (now >= expires_) {
    // Nothing new starts on an expired lease; running calls end when the managers stop their
    // executors, and at the latest two seconds later here.
    auto queued = std::move(queue_);
    queue_.clear();
    for (auto id : queued) fail(id, std::make_exception_ptr(lease_expired("cppless lease: lease " + lease_id_ + " has expired")));
    if (now >= expires_ + 2s)
      for (std::size_t i = 0; i < conns_.size(); ++i)
        if (conns_[i].info.alive) lose(i, "the lease expired");
  }
  for (std::size_t i = 0; i < conns_.size(); ++i) {
    auto& c = conns_[i];
    if (!c.info.alive) continue;
    for (auto id : c.running) {
      const call& work = calls_.at(id);
      if (now < work.deadline) continue;
      // The executor cannot be interrupted from here: its connection is closed (it exits when the
      // function returns, or when its lease ends) and the call fails with the timeout.
      std::erase(c.running, id);
      fail(id, std::make_exception_ptr(timeout_error("cppless lease: call ran past its with_timeout of " +
                                                     std::to_string(work.work.config.timeout_s) + " s")));
      lose(i, "its connection was closed for another call's timeout");
      break;
    }
  }
}

bool lease_client::run_ready() {
  if (ready_.empty()) return false;
  auto batch = std::move(ready_);
  ready_.clear();
  for (auto& [done, result] : batch) done(std::move(result));
  return true;
}

void lease_client::progress(std::unique_lock<std::mutex>& lock, clock::time_point until) {
  clock::time_point spin_until{};
  unsigned idle_rounds = 0;
  for (;;) {
    if (run_ready()) return;
    auto now = clock::now();
    schedule(now);
    enforce_deadlines(now);
    if (run_ready()) return;
    if (pump()) {
      spin_until = {};
      idle_rounds = 0;
      continue;
    }
    now = clock::now();
    if (now >= until) return;
    // Hot leases: the client polls too for a while (a call answered within it costs no wake-up).
    if (request_.mode == lease_mode::hot && !calls_.empty()) {
      if (spin_until == clock::time_point{}) spin_until = now + options_.client_hot_poll;
      if (now < spin_until) {
        // An executor may share this core (2 cores here): past the first rounds, let it run.
        if (++idle_rounds > 64) ::sched_yield();
        continue;
      }
    }
    wait_for_events(lock, until);
    spin_until = {};
  }
}

void lease_client::wait_for_events(std::unique_lock<std::mutex>& lock, clock::time_point until) {
  std::vector<pollfd> fds;
  fds.push_back({wake_fd_, POLLIN, 0});
  for (auto& c : conns_)
    if (c.info.alive) fds.push_back({c.fd.get(), static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
  auto next = std::min(until, clock::now() + 100ms);
  if (!queue_.empty()) next = std::min(next, clock::now() + 1ms);  // a refusing executor may free up
  for (auto& [id, c] : calls_) next = std::min(next, c.deadline);
  next = std::min(next, expires_ > clock::now() ? expires_ : clock::now() + 50ms);
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - clock::now()).count();
  sleeping_ = true;
  lock.unlock();
  ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(ms, 0, 100)));
  std::uint64_t drained = 0;
  [[maybe_unused]] auto n = ::read(wake_fd_, &drained, sizeof drained);
  lock.lock();
  sleeping_ = false;
}

lease_usage lease_client::usage() {
  auto add = [](lease_usage& u, const json& j) {
    u.allocation += std::chrono::nanoseconds(j.value("allocation_ns", std::int64_t{0}));
    u.compute += std::chrono::nanoseconds(j.value("compute_ns", std::int64_t{0}));
    u.hot_poll += std::chrono::nanoseconds(j.value("hot_poll_ns", std::int64_t{0}));
    u.calls += j.value("calls", std::uint64_t{0});
    u.rejected += j.value("rejected", std::uint64_t{0});
    u.executors += j.value("executors", 0u);
  };
  lease_usage u;
  // The managers know the figures first hand; the resource manager's copy is a heartbeat old.
  for (auto& part : grant_.at("parts")) {
    try {
      auto fd = net::connect_to(net::parse_address(part.at("address").get<std::string>()), options_.connect_timeout);
      net::send_message(fd.get(), {{"type", "usage"}, {"token", part.at("token")}}, net::after(options_.connect_timeout));
      json reply = net::receive_message(fd.get(), net::after(options_.connect_timeout));
      if (reply.value("ok", false)) {
        add(u, reply.at("usage"));
        continue;
      }
    } catch (const std::exception&) {
    }
    try {  // that manager is gone: what it last reported to the resource manager
      json status = ask_resource_manager({{"type", "status"}, {"lease", lease_id_}});
      for (auto& p : status.at("parts"))
        if (p.at("manager") == part.at("manager")) add(u, p.at("usage"));
    } catch (const std::exception&) {
    }
  }
  return u;
}

std::string lease_client::state() const {
  return ask_resource_manager({{"type", "status"}, {"lease", lease_id_}}).value("state", "");
}

std::vector<lease_executor> lease_client::executors() {
  std::lock_guard lock(mutex());
  std::vector<lease_executor> out;
  for (auto& c : conns_) out.push_back(c.info);
  return out;
}

}  // namespace cppless::lease_detail
