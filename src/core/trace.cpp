// Invocation traces (include/cppless/trace.hpp): records made on the call path, formatted and
// written by a background thread, so a traced call pays a clock read, an allocation and a push.
#include <cppless/error.hpp>
#include <cppless/instance.hpp>
#include <cppless/trace.hpp>
#include <cppless/worker.hpp>

#include "json_text.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cppless::trace {

namespace detail {

std::atomic<bool> active{false};

// The call path's one time stamp. On x86-64 the TSC (constant rate on any CPU of the last decade;
// ~10 ns, where steady_clock took ~45 ns on this VM, 3% of a hot call), converted to wall time by
// the writer against steady_clock; elsewhere steady_clock's nanoseconds.
inline std::uint64_t ticks() noexcept {
#if defined(__x86_64__)
  return __builtin_ia32_rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now().time_since_epoch()).count());
#endif
}

struct call_record {
  // At submit.
  const char* function_name = nullptr;
  std::uint64_t function_id = 0;
  config_values config;
  const std::string* backend_name = nullptr;  // interned, lives as long as the process
  std::size_t request_bytes = 0;
  std::uint64_t submitted = 0;  // ticks()
  // At the end.
  call_stats stats;
  std::size_t response_bytes = 0;
  bool ok = true;
  std::string error;
};

}  // namespace detail

namespace {

using detail::call_record;

const char* arch_name(architecture a) {
  switch (a) {
    case architecture::x86_64: return "x86_64";
    case architecture::arm64: return "arm64";
    default: return "native";
  }
}

using cppless::detail::append_json_string;

class sink {
 public:
  explicit sink(std::string path, bool truncate) : path_(std::move(path)), truncate_(truncate) {
    steady0_ = clock::now();
    wall0_ = std::chrono::system_clock::now();
    ticks0_ = detail::ticks();
  }
  ~sink() {
    close();
    for (call_record* r : pending_) delete r;
    for (call_record* r : spare_) delete r;
  }

  void open() {
    // The host truncates; a worker appends to the host's file.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate_ ? O_TRUNC : 0), 0644);
    if (fd_ < 0) throw error("cppless::trace: cannot open " + path_ + ": " + std::strerror(errno));
    writer_ = std::thread([this] { run(); });
  }

  // Queues finished records (emptying `records`); hands the caller spare records for its next calls.
  void push(std::vector<call_record*>& records, std::vector<call_record*>& spares) {
    std::lock_guard lock(mutex_);
    if (stopping_) {  // closed (stop() raced with these calls' ends): dropped
      spares.insert(spares.end(), records.begin(), records.end());
    } else {
      const bool was_below = pending_.size() < wake_at;
      pending_.insert(pending_.end(), records.begin(), records.end());
      if (was_below && pending_.size() >= wake_at) wake_.notify_one();  // else the writer looks every 100 ms
      if (spares.empty()) spares.swap(spare_);
    }
    records.clear();
  }

  // A line written as it is (lease records: rare, not on the call path).
  void push_line(std::string line) {
    std::lock_guard lock(mutex_);
    if (!stopping_) lines_.push_back(std::move(line));
  }

  void flush() {
    std::unique_lock lock(mutex_);
    const std::uint64_t want = ++flush_requested_;
    wake_.notify_one();
    flushed_.wait(lock, [&] { return flush_done_ >= want || stopping_; });
  }

  void close() {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    wake_.notify_one();
    if (writer_.joinable()) writer_.join();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    std::lock_guard lock(mutex_);
    for (call_record* r : spare_) delete r;
    spare_.clear();
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    write_header();
    for (;;) {
      wake_.wait_for(lock, std::chrono::milliseconds(100),
                     [&] { return stopping_ || flush_requested_ > flush_done_ || pending_.size() >= wake_at; });
      std::vector<call_record*> batch;
      batch.swap(pending_);
      std::vector<std::string> lines;
      lines.swap(lines_);
      const std::uint64_t request = flush_requested_;
      const bool last = stopping_;
      lock.unlock();
      write_batch(batch);
      for (const std::string& line : lines) write_all(line);
      lock.lock();
      // Records are recycled through push() (no allocation per call); beyond a few batches, freed.
      for (call_record* r : batch) {
        if (spare_.size() < 16384) spare_.push_back(r);
        else delete r;
      }
      flush_done_ = request;
      flushed_.notify_all();
      if (last && pending_.empty()) return;
    }
  }

  std::int64_t unix_ns(clock::time_point t) const {
    const auto wall = wall0_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(t - steady0_);
    return std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count();
  }

  // Nanoseconds per tick, measured against steady_clock over the sink's life so far (at least
  // 1 ms of it: the first batch waits that long if it must).
  void calibrate() {
#if defined(__x86_64__)
    clock::time_point now = clock::now();
    if (now - steady0_ < std::chrono::milliseconds(1)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      now = clock::now();
    }
    const std::uint64_t t = detail::ticks();
    ns_per_tick_ = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - steady0_).count()) /
                   static_cast<double>(t - ticks0_);
#endif
  }

  std::int64_t unix_ns_of_ticks(std::uint64_t t) const {
#if defined(__x86_64__)
    const double since = static_cast<double>(static_cast<std::int64_t>(t - ticks0_)) * ns_per_tick_;
    return unix_ns(steady0_) + static_cast<std::int64_t>(since);
#else
    return unix_ns(clock::time_point(std::chrono::nanoseconds(t)));
#endif
  }

  void write_header() {
    std::string line = "{\"v\":" + std::to_string(format_version) + ",\"kind\":\"process\",\"pid\":" +
                       std::to_string(::getpid()) + ",\"role\":\"" + (cppless::in_worker() ? "worker" : "host") +
                       "\",\"opened_unix_ns\":" + std::to_string(unix_ns(steady0_)) + "}\n";
    write_all(line);
  }

  // Formatting runs beside the calls (on a 2-core machine it competes with them): appends with
  // to_chars, no temporary strings.
  static void put(std::string& out, std::int64_t v) {
    char buf[24];
    out.append(buf, static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
  }

  void write_batch(const std::vector<call_record*>& batch) {
    if (batch.empty()) return;
    calibrate();
    std::string out;
    out.reserve(batch.size() * 480);
    for (const call_record* r : batch) {
      const call_stats& s = r->stats;
      const std::int64_t submitted = unix_ns_of_ticks(r->submitted);
      char id[20];
      std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(r->function_id));
      out += "{\"v\":";
      put(out, format_version);
      out += ",\"kind\":\"call\",\"pid\":";
      put(out, pid_);
      out += ",\"backend\":";
      append_json_string(out, *r->backend_name);
      out += ",\"function\":";
      append_json_string(out, r->function_name ? r->function_name : "");
      out += ",\"function_id\":\"";
      out += id;
      out += "\",\"memory_mb\":";
      put(out, r->config.memory_mb);
      out += ",\"timeout_s\":";
      put(out, r->config.timeout_s);
      out += ",\"arch\":\"";
      out += arch_name(r->config.arch);
      out += "\",\"call\":";
      put(out, s.call_id);
      out += ",\"invocation\":";
      append_json_string(out, s.invocation_id);
      out += ",\"worker\":";
      put(out, s.worker);
      out += s.cold ? ",\"cold\":true" : ",\"cold\":false";
      out += r->ok ? ",\"ok\":true" : ",\"ok\":false";
      if (!r->ok) {
        out += ",\"error\":";
        append_json_string(out, r->error);
      }
      // Start and end of the execution are placed back from the result's arrival (a call handed
      // ahead of time to a busy worker is "handed over" long before it starts).
      const std::int64_t queued = s.queued.count(), execution = s.execution.count(), rt = s.round_trip.count();
      const std::int64_t executed = submitted + std::max(rt, execution);
      out += ",\"submitted_unix_ns\":";
      put(out, submitted);
      out += ",\"queued_ns\":";
      put(out, queued);
      out += ",\"started_unix_ns\":";
      put(out, executed - execution);
      out += ",\"execution_ns\":";
      put(out, execution);
      out += ",\"executed_unix_ns\":";
      put(out, executed);
      out += ",\"round_trip_ns\":";
      put(out, s.round_trip.count());
      out += ",\"request_bytes\":";
      put(out, static_cast<std::int64_t>(r->request_bytes));
      out += ",\"response_bytes\":";
      put(out, static_cast<std::int64_t>(r->response_bytes));
      if (s.billed.count() > 0) {
        out += ",\"billed_ns\":";
        put(out, s.billed.count());
        out += ",\"billed_memory_mb\":";
        put(out, r->config.memory_mb);
      }
      out += "}\n";
    }
    write_all(out);
  }

  void write_all(const std::string& text) {
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0 && fd_ >= 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (!warned_) std::fprintf(stderr, "cppless::trace: writing %s failed: %s\n", path_.c_str(), std::strerror(errno));
        warned_ = true;
        return;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }

  std::string path_;
  bool truncate_;
  int fd_ = -1;
  std::int64_t pid_ = ::getpid();
  bool warned_ = false;
  clock::time_point steady0_;
  std::chrono::system_clock::time_point wall0_;
  std::uint64_t ticks0_ = 0;
  [[maybe_unused]] double ns_per_tick_ = 1.0;  // unused where the tick clock is steady_clock (arm64)
  std::mutex mutex_;
  std::condition_variable wake_, flushed_;
  static constexpr std::size_t wake_at = 4096;  // pending records that wake the writer at once
  std::vector<call_record*> pending_, spare_;
  std::vector<std::string> lines_;
  std::uint64_t flush_requested_ = 0, flush_done_ = 0;
  bool stopping_ = false;
  std::thread writer_;
};

// The current sink, read on every traced call without a lock. Sinks are closed when replaced but
// never freed (a call ending while stop() runs may still be pushing to the old one, which then
// drops the record): one small object per start() in the life of a process.
std::mutex sink_mutex;
std::atomic<sink*> current{nullptr};

void install(sink* fresh) {
  sink* old;
  {
    std::lock_guard lock(sink_mutex);
    old = current.exchange(fresh);
    detail::active.store(fresh != nullptr, std::memory_order_relaxed);
  }
  if (old) {
    old->close();
    // Kept (reachable, so not a leak to LeakSanitizer): a call ending right now may still push.
    static auto& retired = *new std::vector<sink*>();
    std::lock_guard lock(sink_mutex);
    retired.push_back(old);
  }
}

// CPPLESS_TRACE=path: the host truncates the file, its workers (same environment) append.
struct from_environment {
  from_environment() {
    const char* path = std::getenv("CPPLESS_TRACE");
    if (path == nullptr || *path == '\0') return;
    pending_path = path;
    detail::active.store(true, std::memory_order_relaxed);  // opened by the first traced call
  }
  ~from_environment() { install(nullptr); }
  std::string pending_path;
} environment;

sink* sink_for_record() {
  if (sink* s = current.load(std::memory_order_acquire)) return s;
  std::lock_guard lock(sink_mutex);
  if (current.load() == nullptr && !environment.pending_path.empty()) {
    auto* s = new sink(environment.pending_path, !cppless::in_worker());
    environment.pending_path.clear();
    try {
      s->open();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s (CPPLESS_TRACE): tracing is off\n", e.what());
      detail::active.store(false, std::memory_order_relaxed);
      delete s;
      return nullptr;
    }
    current.store(s, std::memory_order_release);
  }
  return current.load();
}

// Each thread keeps its finished records and hands them to the sink in batches (a lock per 64
// calls, or per call after 100 ms without one), and keeps spare records so begin() rarely
// allocates. A thread's batch is handed over at its exit, and by flush()/stop() on that thread.
struct thread_records {
  static constexpr std::size_t batch = 64;
  static constexpr std::uint64_t max_age_ticks = 300'000'000;  // ~100 ms at 3 GHz
  std::vector<call_record*> finished, spares;

  void hand_over() {
    if (finished.empty()) return;
    if (sink* s = sink_for_record()) {
      s->push(finished, spares);
    } else {
      spares.insert(spares.end(), finished.begin(), finished.end());
      finished.clear();
    }
  }
  ~thread_records() {
    hand_over();
    for (call_record* r : spares) delete r;
  }
};
thread_local thread_records records;

const std::string* intern_backend_name(const backend& b) {
  // One name per backend object; names are few and kept for the life of the process.
  // Never destroyed: the writer's last flush at exit (after function statics are gone) reads them.
  static std::mutex m;
  static auto& names = *new std::map<const backend*, std::unique_ptr<std::string>>();
  thread_local const backend* last = nullptr;
  thread_local const std::string* last_name = nullptr;
  if (&b == last) return last_name;
  std::lock_guard lock(m);
  auto& slot = names[&b];
  if (!slot) slot = std::make_unique<std::string>(b.name());
  last = &b;
  last_name = slot.get();
  return last_name;
}

}  // namespace

namespace detail {

call_record* begin(const invocation& call, const backend& where) {
  call_record* r;
  if (!records.spares.empty()) {
    r = records.spares.back();
    records.spares.pop_back();
  } else {
    r = new call_record{};
  }
  r->function_name = call.function_name;
  r->function_id = call.function_id;
  r->config = call.config;
  r->backend_name = intern_backend_name(where);
  r->request_bytes = call.payload.size();
  r->submitted = ticks();
  return r;
}

void end(call_record* r, const outcome& done) noexcept {
  if (r == nullptr) return;
  try {
    r->stats = done.stats;
    r->response_bytes = done.result.size();
    r->ok = !done.error;
    r->error.clear();
    if (done.error) {
      try {
        std::rethrow_exception(done.error);
      } catch (const std::exception& e) {
        r->error = e.what();
      } catch (...) {
        r->error = "unknown error";
      }
    }
    records.finished.push_back(r);
    if (records.finished.size() >= thread_records::batch ||
        r->submitted - records.finished.front()->submitted > thread_records::max_age_ticks)
      records.hand_over();
    return;
  } catch (...) {
  }
  delete r;
}

void discard(call_record* r) noexcept { delete r; }

}  // namespace detail

void start(const std::string& path) {
  records.hand_over();  // calls that ended before belong to the previous trace
  auto s = std::make_unique<sink>(path, true);
  s->open();
  {
    std::lock_guard lock(sink_mutex);
    environment.pending_path.clear();
  }
  install(s.release());
}

void stop() {
  records.hand_over();
  install(nullptr);
}

void flush() {
  records.hand_over();
  if (sink* s = current.load(std::memory_order_acquire)) s->flush();
}

void record_lease(const std::string& lease, unsigned memory_mb, std::chrono::nanoseconds allocated,
                  std::chrono::nanoseconds hot_poll) {
  if (!detail::active.load(std::memory_order_relaxed)) return;
  sink* s = sink_for_record();
  if (s == nullptr) return;
  std::string line = "{\"v\":" + std::to_string(format_version) + ",\"kind\":\"lease\",\"pid\":" +
                     std::to_string(::getpid()) + ",\"lease\":";
  append_json_string(line, lease);
  line += ",\"memory_mb\":" + std::to_string(memory_mb) + ",\"allocated_ns\":" + std::to_string(allocated.count()) +
          ",\"hot_poll_ns\":" + std::to_string(hot_poll.count()) + "}\n";
  s->push_line(std::move(line));
}

bool enabled() noexcept { return detail::active.load(std::memory_order_relaxed); }

}  // namespace cppless::trace
