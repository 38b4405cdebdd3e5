// Invocation traces (include/cppless/trace.hpp): records made on the call path, formatted and
// written by a background thread, so a traced call pays a clock read, an allocation and a push.
#include <cppless/error.hpp>
#include <cppless/instance.hpp>
#include <cppless/trace.hpp>
#include <cppless/worker.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
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

struct call_record {
  // At submit.
  const char* function_name;
  std::uint64_t function_id;
  config_values config;
  const std::string* backend_name;  // interned, lives as long as the process
  std::size_t request_bytes;
  clock::time_point submitted;
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

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

class sink {
 public:
  explicit sink(std::string path, bool truncate) : path_(std::move(path)), truncate_(truncate) {
    steady0_ = clock::now();
    wall0_ = std::chrono::system_clock::now();
  }
  ~sink() { close(); }

  void open() {
    // The host truncates; a worker appends to the host's file.
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate_ ? O_TRUNC : 0), 0644);
    if (fd_ < 0) throw error("cppless::trace: cannot open " + path_ + ": " + std::strerror(errno));
    writer_ = std::thread([this] { run(); });
  }

  void push(call_record* r) {
    std::lock_guard lock(mutex_);
    pending_.push_back(r);
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
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    write_header();
    for (;;) {
      wake_.wait_for(lock, std::chrono::milliseconds(100),
                     [&] { return stopping_ || flush_requested_ > flush_done_ || pending_.size() >= 4096; });
      std::vector<call_record*> batch;
      batch.swap(pending_);
      const std::uint64_t request = flush_requested_;
      const bool last = stopping_;
      lock.unlock();
      write_batch(batch);
      lock.lock();
      flush_done_ = request;
      flushed_.notify_all();
      if (last && pending_.empty()) return;
    }
  }

  std::int64_t unix_ns(clock::time_point t) const {
    const auto wall = wall0_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(t - steady0_);
    return std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count();
  }

  void write_header() {
    std::string line = "{\"v\":" + std::to_string(format_version) + ",\"kind\":\"process\",\"pid\":" +
                       std::to_string(::getpid()) + ",\"role\":\"" + (cppless::in_worker() ? "worker" : "host") +
                       "\",\"opened_unix_ns\":" + std::to_string(unix_ns(steady0_)) + "}\n";
    write_all(line);
  }

  void write_batch(std::vector<call_record*>& batch) {
    if (batch.empty()) return;
    std::string out;
    out.reserve(batch.size() * 420);
    const std::string pid = std::to_string(::getpid());
    for (call_record* raw : batch) {
      std::unique_ptr<call_record> r(raw);
      const call_stats& s = r->stats;
      const std::int64_t submitted = unix_ns(r->submitted);
      char id[20];
      std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(r->function_id));
      out += "{\"v\":" + std::to_string(format_version) + ",\"kind\":\"call\",\"pid\":" + pid + ",\"backend\":";
      append_json_string(out, *r->backend_name);
      out += ",\"function\":";
      append_json_string(out, r->function_name ? r->function_name : "");
      out += ",\"function_id\":\"";
      out += id;
      out += "\",\"memory_mb\":" + std::to_string(r->config.memory_mb) + ",\"timeout_s\":" +
             std::to_string(r->config.timeout_s) + ",\"arch\":\"" + arch_name(r->config.arch) +
             "\",\"call\":" + std::to_string(s.call_id) + ",\"invocation\":";
      append_json_string(out, s.invocation_id);
      out += ",\"worker\":" + std::to_string(s.worker) + ",\"cold\":" + (s.cold ? "true" : "false") +
             ",\"ok\":" + (r->ok ? "true" : "false");
      if (!r->ok) {
        out += ",\"error\":";
        append_json_string(out, r->error);
      }
      out += ",\"submitted_unix_ns\":" + std::to_string(submitted) + ",\"queued_ns\":" + std::to_string(s.queued.count()) +
             ",\"started_unix_ns\":" + std::to_string(submitted + s.queued.count()) +
             ",\"execution_ns\":" + std::to_string(s.execution.count()) +
             ",\"executed_unix_ns\":" + std::to_string(submitted + s.queued.count() + s.execution.count()) +
             ",\"round_trip_ns\":" + std::to_string(s.round_trip.count()) +
             ",\"request_bytes\":" + std::to_string(r->request_bytes) +
             ",\"response_bytes\":" + std::to_string(r->response_bytes);
      if (s.billed.count() > 0)
        out += ",\"billed_ns\":" + std::to_string(s.billed.count()) + ",\"billed_memory_mb\":" + std::to_string(r->config.memory_mb);
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
  bool warned_ = false;
  clock::time_point steady0_;
  std::chrono::system_clock::time_point wall0_;
  std::mutex mutex_;
  std::condition_variable wake_, flushed_;
  std::vector<call_record*> pending_;
  std::uint64_t flush_requested_ = 0, flush_done_ = 0;
  bool stopping_ = false;
  std::thread writer_;
};

// The current sink. Records in flight keep no reference to it: a record ending after stop() is
// dropped, one ending after a new start() goes to the new file.
std::mutex sink_mutex;
std::shared_ptr<sink> current;

std::shared_ptr<sink> current_sink() {
  std::lock_guard lock(sink_mutex);
  return current;
}

void install(std::shared_ptr<sink> fresh) {
  std::shared_ptr<sink> old;
  {
    std::lock_guard lock(sink_mutex);
    old = std::move(current);
    current = std::move(fresh);
    detail::active.store(current != nullptr, std::memory_order_relaxed);
  }
  if (old) old->close();
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

std::shared_ptr<sink> sink_for_record() {
  std::lock_guard lock(sink_mutex);
  if (!current && !environment.pending_path.empty()) {
    auto s = std::make_shared<sink>(environment.pending_path, !cppless::in_worker());
    environment.pending_path.clear();
    try {
      s->open();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s (CPPLESS_TRACE): tracing is off\n", e.what());
      detail::active.store(false, std::memory_order_relaxed);
      return nullptr;
    }
    current = std::move(s);
  }
  return current;
}

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
  auto* r = new call_record{call.function_name, call.function_id, call.config, intern_backend_name(where),
                            call.payload.size(), clock::now(), {}, 0, true, {}};
  return r;
}

void end(call_record* r, const outcome& done) noexcept {
  if (r == nullptr) return;
  try {
    r->stats = done.stats;
    r->response_bytes = done.result.size();
    if (done.error) {
      r->ok = false;
      try {
        std::rethrow_exception(done.error);
      } catch (const std::exception& e) {
        r->error = e.what();
      } catch (...) {
        r->error = "unknown error";
      }
    }
    if (auto s = sink_for_record()) {
      s->push(r);
      return;
    }
  } catch (...) {
  }
  delete r;
}

void discard(call_record* r) noexcept { delete r; }

}  // namespace detail

void start(const std::string& path) {
  auto s = std::make_shared<sink>(path, true);
  s->open();
  {
    std::lock_guard lock(sink_mutex);
    environment.pending_path.clear();
  }
  install(std::move(s));
}

void stop() { install(nullptr); }

void flush() {
  if (auto s = current_sink()) s->flush();
}

bool enabled() noexcept { return detail::active.load(std::memory_order_relaxed); }

}  // namespace cppless::trace
