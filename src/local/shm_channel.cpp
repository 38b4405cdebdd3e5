#include "shm_channel.hpp"

#include <cppless/error.hpp>

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <new>
#include <string>
#include <utility>

namespace cppless::local {

namespace {
// Copies n bytes to ring position w (wrapping at the end of the storage).
void copy_in(std::byte* data, std::uint64_t w, const std::byte* bytes, std::size_t n) {
  const std::size_t at = w & (ring_capacity - 1);
  const std::size_t first = std::min(n, ring_capacity - at);
  std::memcpy(data + at, bytes, first);
  if (n > first) std::memcpy(data, bytes + first, n - first);
}
}  // namespace

bool ring::load_peer_write(std::uint64_t& w) const {
  if (cursor_->broken) return false;
  w = pos_->write_pos.load(std::memory_order_acquire);
  if (w - cursor_->own <= ring_capacity) return true;
  cursor_->broken = true;
  cursor_->bad_position = w;
  return false;
}

bool ring::load_peer_read(std::uint64_t& r) const {
  if (cursor_->broken) return false;
  r = pos_->read_pos.load(std::memory_order_acquire);
  if (cursor_->own - r <= ring_capacity) return true;
  cursor_->broken = true;
  cursor_->bad_position = r;
  return false;
}

std::size_t ring::readable() const {
  std::uint64_t w;
  return load_peer_write(w) ? static_cast<std::size_t>(w - cursor_->own) : 0;
}

std::size_t ring::writable() const {
  std::uint64_t r;
  return load_peer_read(r) ? ring_capacity - static_cast<std::size_t>(cursor_->own - r) : 0;
}

std::size_t ring::write_some(const std::byte* bytes, std::size_t size) {
  return write_some(std::span<const std::byte>(bytes, size), {});
}

std::size_t ring::write_some(std::span<const std::byte> first, std::span<const std::byte> second) {
  if (cursor_->broken) return 0;
  const std::uint64_t w = cursor_->own;
  const std::size_t wanted = first.size() + second.size();
  std::size_t room = ring_capacity - static_cast<std::size_t>(w - cursor_->peer_seen);
  if (room < wanted) {
    std::uint64_t r;
    if (!load_peer_read(r)) return 0;
    cursor_->peer_seen = r;
    room = ring_capacity - static_cast<std::size_t>(w - r);
  }
  const std::size_t a = std::min(first.size(), room);
  const std::size_t b = std::min(second.size(), room - a);
  if (a + b == 0) return 0;
  if (a) copy_in(data_, w, first.data(), a);
  if (b) copy_in(data_, w + a, second.data(), b);
  cursor_->own = w + a + b;
  pos_->write_pos.store(cursor_->own, std::memory_order_seq_cst);  // orders it before the peer-asleep check
  return a + b;
}

std::span<const std::byte> ring::peek() const {
  const std::uint64_t r = cursor_->own;
  std::uint64_t w;
  if (!load_peer_write(w)) return {};
  const std::size_t at = r & (ring_capacity - 1);
  return {data_ + at, std::min(static_cast<std::size_t>(w - r), ring_capacity - at)};
}

region region::create() {
  region out;
  out.fd_ = static_cast<int>(::syscall(SYS_memfd_create, "cppless-worker", 1u /* MFD_CLOEXEC */));
  if (out.fd_ < 0) throw error(std::string("cppless local: memfd_create failed: ") + std::strerror(errno));
  if (::ftruncate(out.fd_, static_cast<off_t>(region_size)) != 0)
    throw error(std::string("cppless local: cannot size shared memory: ") + std::strerror(errno));
  void* p = ::mmap(nullptr, region_size, PROT_READ | PROT_WRITE, MAP_SHARED, out.fd_, 0);
  if (p == MAP_FAILED) throw error(std::string("cppless local: mmap failed: ") + std::strerror(errno));
  out.header_ = new (p) region_header();
  return out;
}

region region::attach(int fd) {
  region out;
  out.fd_ = fd;
  void* p = ::mmap(nullptr, region_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw error(std::string("cppless worker: cannot map shared memory: ") + std::strerror(errno));
  out.header_ = static_cast<region_header*>(p);
  return out;
}

region::region(region&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      header_(std::exchange(other.header_, nullptr)),
      to_worker_cursor_(other.to_worker_cursor_),
      to_host_cursor_(other.to_host_cursor_) {}

region& region::operator=(region&& other) noexcept {
  if (this != &other) {
    this->~region();
    fd_ = std::exchange(other.fd_, -1);
    header_ = std::exchange(other.header_, nullptr);
    to_worker_cursor_ = other.to_worker_cursor_;
    to_host_cursor_ = other.to_host_cursor_;
  }
  return *this;
}

std::string region::broken_reason() const {
  auto describe = [](const char* which, const ring_cursor& c) {
    return std::string(which) + " ring position " + std::to_string(c.bad_position) + " is out of range (own position " +
           std::to_string(c.own) + ", capacity " + std::to_string(ring_capacity) + ")";
  };
  if (to_worker_cursor_.broken) return describe("its read", to_worker_cursor_);
  if (to_host_cursor_.broken) return describe("its write", to_host_cursor_);
  return {};
}

region::~region() {
  if (header_) ::munmap(header_, region_size);
  if (fd_ >= 0) ::close(fd_);
}

void idle_backoff::pause() {
  if (++idle_rounds_ < 4096) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    return;
  }
  sched_yield();
}

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::uint32_t timeout_ms) {
  timespec ts{static_cast<time_t>(timeout_ms / 1000), static_cast<long>(timeout_ms % 1000) * 1000000L};
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, 0x7fffffff, nullptr, nullptr, 0);
}

}  // namespace cppless::local
