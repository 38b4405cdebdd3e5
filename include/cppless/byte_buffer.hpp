// cppless/byte_buffer.hpp — the contiguous, growable byte storage every payload is written into.
//
// Unlike std::vector<std::byte>, growing it does not zero the new bytes: the archive reserves room
// and immediately overwrites it, so zeroing would be a second pass over every payload. It is
// move-only so a multi-megabyte payload is never copied by accident; clone() copies on purpose.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>

namespace cppless {

class byte_buffer {
 public:
  byte_buffer() noexcept = default;
  explicit byte_buffer(std::size_t capacity) { reserve(capacity); }

  byte_buffer(byte_buffer&& other) noexcept
      : data_(std::move(other.data_)), size_(std::exchange(other.size_, 0)), capacity_(std::exchange(other.capacity_, 0)) {}
  byte_buffer& operator=(byte_buffer&& other) noexcept {
    data_ = std::move(other.data_);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    return *this;
  }
  byte_buffer(const byte_buffer&) = delete;
  byte_buffer& operator=(const byte_buffer&) = delete;
  ~byte_buffer() = default;

  // An explicit deep copy (capacity trimmed to the size).
  [[nodiscard]] byte_buffer clone() const {
    byte_buffer copy(size_);
    copy.append(data(), size_);
    return copy;
  }

  [[nodiscard]] std::byte* data() noexcept { return data_.get(); }
  [[nodiscard]] const std::byte* data() const noexcept { return data_.get(); }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::span<const std::byte> span() const noexcept { return {data_.get(), size_}; }
  [[nodiscard]] std::span<std::byte> mutable_span() noexcept { return {data_.get(), size_}; }
  [[nodiscard]] std::byte* begin() noexcept { return data_.get(); }
  [[nodiscard]] std::byte* end() noexcept { return data_.get() + size_; }
  [[nodiscard]] const std::byte* begin() const noexcept { return data_.get(); }
  [[nodiscard]] const std::byte* end() const noexcept { return data_.get() + size_; }

  // Keeps the capacity, so a buffer reused for the next payload does not allocate again.
  void clear() noexcept { size_ = 0; }

  // Ensures capacity() >= n (exactly n when it has to grow: the caller knows best).
  void reserve(std::size_t n) {
    if (n > capacity_) reallocate(n);
  }

  void append(const void* src, std::size_t n) {
    if (n == 0) return;  // src may be null then; memcpy(…, nullptr, 0) is still undefined
    std::memcpy(grow_uninitialized(n), src, n);
  }

  // Extends the size by n and returns the start of the n new, uninitialised bytes. This is the
  // archive's hot path: one comparison, and a call out of line only when the storage must grow.
  [[nodiscard]] std::byte* grow_uninitialized(std::size_t n) {
    if (capacity_ - size_ < n) [[unlikely]]
      grow_for(n);
    std::byte* tail = data_.get() + size_;
    size_ += n;
    return tail;
  }

  // Sets the size to n; bytes past the old size are uninitialised.
  void resize_uninitialized(std::size_t n) {
    reserve(n);
    size_ = n;
  }

  // Gives up the storage (size() bytes are valid); the buffer is left empty.
  [[nodiscard]] std::unique_ptr<std::byte[]> release() noexcept {
    size_ = capacity_ = 0;
    return std::move(data_);
  }

  friend bool operator==(const byte_buffer& a, const byte_buffer& b) noexcept {
    return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.data(), b.data(), a.size_) == 0);
  }

 private:
  // Geometric growth (x2) keeps appends amortised O(1); kept out of line so the inlined fast
  // path in grow_uninitialized stays small.
  [[gnu::noinline]] void grow_for(std::size_t extra) {
    if (extra > max_size() - size_) throw std::length_error("cppless::byte_buffer: size overflow");
    const std::size_t needed = size_ + extra;
    std::size_t cap = capacity_ < max_size() / 2 ? capacity_ * 2 : max_size();
    reallocate(std::max({needed, cap, std::size_t{64}}));
  }

  void reallocate(std::size_t cap) {
    if (cap > max_size()) throw std::length_error("cppless::byte_buffer: size overflow");
    // new std::byte[n] (not make_unique, which value-initialises) leaves the bytes untouched.
    std::unique_ptr<std::byte[]> fresh(new std::byte[cap]);
    if (size_ != 0) std::memcpy(fresh.get(), data_.get(), size_);
    data_ = std::move(fresh);
    capacity_ = cap;
  }

  static constexpr std::size_t max_size() noexcept { return static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max()); }

  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

}  // namespace cppless
