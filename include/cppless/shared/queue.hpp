// cppless/shared/queue.hpp — a shared FIFO queue with blocking pop (work distribution between
// functions, results back to the host).
//
// Each item is delivered once, also when a pop's reply is lost: a blocking pop moves the item
// into a per-client slot on the server (BLMOVE) where a retry finds it, and the slot is emptied once
// the item is in hand. An item popped by a process that then dies is gone with it.
#pragma once

#include <cppless/shared/client.hpp>
#include <cppless/shared/codec.hpp>
#include <cppless/shared/errors.hpp>
#include <cppless/shared/wait.hpp>

#include <cstdint>
#include <optional>

namespace cppless::shared {

class store;

namespace detail {
// The raw item (tagged encoding), or nullopt if the queue stayed empty until the deadline (or was
// empty, when block is false).
std::optional<std::string> pop_item(const object_ref& obj, const kind_info& kind, clock::time_point deadline, bool block);
}  // namespace detail

template <class T>
class queue : public detail::handle {
 public:
  queue() = default;

  // Appends; returns the length afterwards.
  std::int64_t push(const T& value) const {
    const std::string item = detail::encode_tagged(value);
    return detail::run(ref_, detail::script::queue_push, kind(), true, {item}).int_at(0);
  }
  // Takes the head, waiting for one; throws shared::wait_timeout after `timeout`.
  T pop(milliseconds timeout = default_wait) const {
    if (auto v = pop_for(timeout)) return std::move(*v);
    throw shared::wait_timeout("cppless::shared: queue " + ref_.describe() + " stayed empty " + detail::after(timeout));
  }
  // Takes the head, waiting up to `timeout`; nullopt if none came.
  std::optional<T> pop_for(milliseconds timeout) const {
    auto item = detail::pop_item(ref_, kind(), detail::deadline_after(timeout), true);
    if (!item) return std::nullopt;
    return detail::decode_tagged<T>(*item, ref_.describe());
  }
  // Takes the head if there is one, without waiting.
  std::optional<T> try_pop() const {
    auto item = detail::pop_item(ref_, kind(), detail::clock::now(), false);
    if (!item) return std::nullopt;
    return detail::decode_tagged<T>(*item, ref_.describe());
  }
  [[nodiscard]] std::int64_t size() const { return detail::run(ref_, detail::script::queue_size, kind(), false, {}).int_at(0); }

  static const detail::kind_info& kind() {
    static const detail::kind_info k{"queue|" + detail::type_tag<T>(), "queue<" + detail::type_name<T>() + ">"};
    return k;
  }

 private:
  friend class shared::store;
  explicit queue(detail::object_ref ref) : handle(std::move(ref)) {}
};

}  // namespace cppless::shared
