// Shared-memory transport of the local backend: one region per worker holding two byte rings
// (host->worker, worker->host) and the flags each side uses to avoid needless wake-ups.
//
// Each ring is single-producer single-consumer over monotonically increasing positions; a frame
// may be larger than the ring and is then streamed through it. A side with nothing to do spins
// for a bounded time, then sleeps: the worker on a futex in the region, the host on an eventfd
// shared by all workers (so one epoll covers every worker and the pidfds that report deaths).
// A side only pays for a wake-up syscall when the peer announced it is sleeping (Dekker-style
// flags, all sequentially consistent).
//
// The region is shared with a less trusted side (a worker runs user code that can scribble on
// it), so each side keeps the positions it owns in private memory (ring_cursor) and checks every
// position it reads from the region before using it: a peer position out of range marks the
// ring broken, and a broken ring reads as empty and full, so nothing is copied out of bounds.
// The owner of the cursor (the host) then treats the peer as crashed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace cppless::local {

inline constexpr std::size_t ring_capacity = std::size_t{1} << 20;  // per direction, power of two

struct alignas(64) ring_positions {
  std::atomic<std::uint64_t> write_pos{0};
  alignas(64) std::atomic<std::uint64_t> read_pos{0};
};

// One side's private view of a ring: the position it owns (the peer's copy in the region is only
// published, never read back) and its last validated look at the peer's position. The writer
// reads the reader's line again only when `peer_seen` says the ring may be full, so a write does
// not wait for that line to come over from the reader's core every time.
struct ring_cursor {
  std::uint64_t own = 0;
  std::uint64_t peer_seen = 0;
  bool broken = false;  // the peer published a position out of range; sticky
  std::uint64_t bad_position = 0;  // what it published, for the message
};

struct alignas(64) region_header {
  ring_positions to_worker;
  ring_positions to_host;
  alignas(64) std::atomic<std::uint32_t> worker_seq{0};      // futex word the worker sleeps on
  std::atomic<std::uint32_t> worker_sleeping{0};
  alignas(64) std::atomic<std::uint32_t> host_sleeping{0};  // host sleeps on the shared eventfd
  // Set by a sleeping host that has bytes for this worker which did not fit: only then does the
  // worker's reading (which makes room) need to wake it.
  std::atomic<std::uint32_t> host_wants_room{0};
};

inline constexpr std::size_t region_size = sizeof(region_header) + 2 * ring_capacity;

// One direction of a region, seen from either side. Every peer position is validated: reading,
// 0 <= write - read <= capacity; writing, 0 <= write - read <= capacity (unsigned differences, so
// a position behind or ahead of the valid window fails the same check).
class ring {
 public:
  ring(ring_positions* positions, std::byte* data, ring_cursor* cursor)
      : pos_(positions), data_(data), cursor_(cursor) {}

  // Reader side: bytes available (0 when broken).
  std::size_t readable() const;
  // Writer side: room left (0 when broken).
  std::size_t writable() const;
  bool broken() const { return cursor_->broken; }
  // Copies as much of `bytes` as fits; returns how much.
  std::size_t write_some(const std::byte* bytes, std::size_t size);
  // Copies as much of `first` and then `second` as fits, and publishes them together: a frame's
  // header and payload reach the reader with one store to the shared position (one cache-line
  // transfer), not two. Returns how much in all.
  std::size_t write_some(std::span<const std::byte> first, std::span<const std::byte> second);
  // The contiguous readable bytes at the read position (may be fewer than readable()).
  std::span<const std::byte> peek() const;
  // n must not exceed what peek() returned.
  void consume(std::size_t n) {
    cursor_->own += n;
    pos_->read_pos.store(cursor_->own, std::memory_order_release);
  }

 private:
  // The peer's position, or nullopt (and the ring marked broken) when it is out of range.
  bool load_peer_write(std::uint64_t& w) const;
  bool load_peer_read(std::uint64_t& r) const;

  ring_positions* pos_;
  std::byte* data_;
  ring_cursor* cursor_;
};

// A mapped region (memfd) and its two rings.
class region {
 public:
  static region create();           // host: new memfd, zeroed header
  static region attach(int fd);     // worker: map an inherited memfd
  region() = default;
  region(region&& other) noexcept;
  region& operator=(region&& other) noexcept;
  ~region();

  int fd() const { return fd_; }
  region_header& header() const { return *header_; }
  // The two directions, each with this side's private cursor (a side writes one and reads the
  // other, so one cursor per direction serves either side).
  ring to_worker() { return ring(&header_->to_worker, data(), &to_worker_cursor_); }
  ring to_host() { return ring(&header_->to_host, data() + ring_capacity, &to_host_cursor_); }
  bool broken() const { return to_worker_cursor_.broken || to_host_cursor_.broken; }
  // What was wrong, for the message that names the peer's crash.
  std::string broken_reason() const;

 private:
  std::byte* data() const { return reinterpret_cast<std::byte*>(header_ + 1); }

  int fd_ = -1;
  region_header* header_ = nullptr;
  ring_cursor to_worker_cursor_, to_host_cursor_;
};

// How a side waits while it polls hot: the CPU's pause instruction for a few thousand rounds
// (tens of microseconds: a reply to a short call comes within them), then sched_yield on every
// round, so that on an oversubscribed machine a long poll hands the core to a process that
// computes instead of stealing its time slice.
class idle_backoff {
 public:
  void reset() { idle_rounds_ = 0; }
  void pause();

 private:
  unsigned idle_rounds_ = 0;
};

// futex helpers on a word inside shared memory (not FUTEX_PRIVATE: other processes share it).
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::uint32_t timeout_ms);
void futex_wake_all(std::atomic<std::uint32_t>& word);

}  // namespace cppless::local
