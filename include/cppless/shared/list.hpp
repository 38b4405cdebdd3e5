// cppless/shared/list.hpp — a shared list (Crucial's List): indexed get/set, push and pop at both
// ends, ranges. Every call is one linearizable operation; pushes, pops and sets after a lost reply
// are applied once.
#pragma once

#include <cppless/shared/client.hpp>
#include <cppless/shared/codec.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace cppless::shared {

class store;

template <class T>
class list : public detail::handle {
 public:
  list() = default;

  // Returns the length afterwards.
  std::int64_t push_back(const T& item) const { return push("r", item); }
  std::int64_t push_front(const T& item) const { return push("l", item); }
  // nullopt when the list is empty.
  std::optional<T> pop_back() const { return pop("r"); }
  std::optional<T> pop_front() const { return pop("l"); }
  // The item at `index` (negative: from the end), nullopt when there is none.
  std::optional<T> get(std::int64_t index) const {
    const std::string i = std::to_string(index);
    detail::reply r = detail::run(ref_, detail::script::list_get, kind(), false, {i});
    if (r.int_at(0) != 1) return std::nullopt;
    return detail::decode<T>(r.str_at(1));
  }
  // Replaces the item at `index` (negative: from the end); index_out_of_range when there is none.
  void set(std::int64_t index, const T& item) const {
    const std::string i = std::to_string(index), v = detail::encode(item);
    detail::run(ref_, detail::script::list_set, kind(), true, {i, v});
  }
  // Items first..last inclusive (negative: from the end), as Redis' LRANGE: one snapshot.
  std::vector<T> range(std::int64_t first = 0, std::int64_t last = -1) const {
    const std::string a = std::to_string(first), b = std::to_string(last);
    detail::reply r = detail::run(ref_, detail::script::list_range, kind(), false, {a, b});
    std::vector<T> out;
    out.reserve(r.elements.size());
    for (const auto& e : r.elements) out.push_back(detail::decode<T>(e.str));
    return out;
  }
  [[nodiscard]] std::int64_t size() const { return detail::run(ref_, detail::script::list_size, kind(), false, {}).int_at(0); }

  static const detail::kind_info& kind() {
    static const detail::kind_info k{"list|" + detail::type_tag<T>(), "list<" + detail::type_name<T>() + ">"};
    return k;
  }

 private:
  friend class shared::store;
  explicit list(detail::object_ref ref) : handle(std::move(ref)) {}

  std::int64_t push(const char* end, const T& item) const {
    const std::string v = detail::encode(item);
    return detail::run(ref_, detail::script::list_push, kind(), true, {end, v}).int_at(0);
  }
  std::optional<T> pop(const char* end) const {
    detail::reply r = detail::run(ref_, detail::script::list_pop, kind(), true, {end});
    if (r.int_at(0) != 1) return std::nullopt;
    return detail::decode<T>(r.str_at(1));
  }
};

}  // namespace cppless::shared
