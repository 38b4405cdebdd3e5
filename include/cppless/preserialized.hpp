// cppless/preserialized.hpp — a large input shared by many calls (a scene, a model, a graph),
// encoded once on the host and decoded once per worker process.
//
//   cppless::preserialized<scene> s(std::move(big_scene));        // encodes now, once
//   auto fn = [s](tile t) { return render(s.get(), t); };          // capture it like any value
//   for (auto& t : tiles) cppless::dispatch(instance, fn, out[i], t);
//
// Capturing the value itself would encode it again for every call and decode it again in every
// call. A preserialized<T> copies its ready encoding into the payload (a memcpy) and, on the
// worker, looks its content hash up in a per-process cache: the first call there decodes it,
// the following calls (the worker is warm) reuse the decoded object. The cache keeps the most
// recent `cache_capacity` contents per type. The bytes still travel with every call; what is
// saved is the encoding on the host and the decoding on the worker.
//
// Wire: u64 content hash, u64 length, the encoding of T. A worker checks the hash of content it
// decodes (a mismatch is a decode_error), so a corrupt payload cannot plant a wrong object.
#pragma once

#include <cppless/archive.hpp>
#include <cppless/byte_buffer.hpp>
#include <cppless/error.hpp>
#include <cppless/identity.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace cppless {

template <class T>
class preserialized {
 public:
  static constexpr std::size_t cache_capacity = 4;

  preserialized() = default;
  explicit preserialized(T value) : preserialized(std::make_shared<const T>(std::move(value))) {}
  explicit preserialized(std::shared_ptr<const T> value) : value_(std::move(value)) {
    if (!value_) throw error("cppless::preserialized: null value");
    auto bytes = std::make_shared<byte_buffer>(to_bytes(*value_));
    hash_ = content_hash(bytes->span());
    bytes_ = std::move(bytes);
  }

  // The value: the host's own object, or on a worker the one decoded for this content.
  [[nodiscard]] const T& get() const {
    if (!value_) throw error("cppless::preserialized: empty (default-constructed and never loaded)");
    return *value_;
  }
  [[nodiscard]] std::shared_ptr<const T> shared() const { return value_; }
  [[nodiscard]] std::uint64_t hash() const noexcept { return hash_; }
  [[nodiscard]] std::size_t encoded_size() const noexcept { return bytes_ ? bytes_->size() : 0; }

  // Decodes done by this process (for tests and benchmarks: a warm worker decodes a content once).
  [[nodiscard]] static std::size_t decodes() {
    std::lock_guard lock(cache().mutex);
    return cache().decodes;
  }

  template <class A>
  void save(A& ar) const {
    if (!bytes_) throw error("cppless::preserialized: cannot send an empty value");
    const std::uint64_t header[2] = {hash_, bytes_->size()};
    ar.write_bytes(header, sizeof header);
    ar.write_bytes(bytes_->data(), bytes_->size());
  }

  template <class A>
  void load(A& ar) {
    std::uint64_t claimed;
    ar.read_bytes(&claimed, sizeof claimed);
    const std::size_t n = ar.read_length("cppless::preserialized", 1, 1);
    const std::span<const std::byte> bytes(ar.take(n, "cppless::preserialized"), n);
    value_ = lookup_or_decode(claimed, bytes);
    hash_ = claimed;
    bytes_.reset();  // a worker does not send it on (a nested call would need it: encode again)
  }

 private:
  struct cache_state {
    std::mutex mutex;
    std::deque<std::pair<std::uint64_t, std::shared_ptr<const T>>> recent;  // newest first
    std::size_t decodes = 0;
  };
  static cache_state& cache() {
    static cache_state state;
    return state;
  }

  static std::uint64_t content_hash(std::span<const std::byte> bytes) {
    return hash64(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), 0x9e3779b97f4a7c15ull ^ bytes.size());
  }

  static std::shared_ptr<const T> lookup_or_decode(std::uint64_t claimed, std::span<const std::byte> bytes) {
    cache_state& c = cache();
    {
      std::lock_guard lock(c.mutex);
      for (auto& [hash, value] : c.recent)
        if (hash == claimed) return value;
    }
    if (content_hash(bytes) != claimed)
      throw decode_error("corrupt payload: cppless::preserialized content does not match its hash");
    auto fresh = std::make_shared<T>();
    from_bytes(bytes, *fresh);
    std::shared_ptr<const T> value = std::move(fresh);
    std::lock_guard lock(c.mutex);
    ++c.decodes;
    c.recent.emplace_front(claimed, value);
    if (c.recent.size() > cache_capacity) c.recent.pop_back();
    return value;
  }

  std::shared_ptr<const T> value_;
  std::shared_ptr<const byte_buffer> bytes_;
  std::uint64_t hash_ = 0;
};

}  // namespace cppless
