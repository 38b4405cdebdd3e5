// cppless/shared/map.hpp — a shared hash map with server-side merges (Crucial's Map, and the
// "fast aggregates" of its section 3.2.2: merging runs inside Redis, one round trip per update).
//
// Keys and values are any serializable types (keys compare by their encoding). merge(key, x, op)
// combines x into the entry with add, min or max (numeric values only; integers exactly, and an
// integer add that would leave the value type's range is refused with nothing changed); an absent
// entry becomes x.
#pragma once

#include <cppless/shared/client.hpp>
#include <cppless/shared/codec.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>
#include <algorithm>
#include <string>

namespace cppless::shared {

class store;

enum class merge_op { add, min, max };

template <class K, class V>
class map : public detail::handle {
 public:
  map() = default;

  std::optional<V> get(const K& key) const {
    const std::string k = detail::encode(key);
    detail::reply r = detail::run(ref_, detail::script::map_get, kind(), false, {k});
    if (r.nil_at(0)) return std::nullopt;
    return detail::decode<V>(r.str_at(0));
  }
  // Inserts or replaces; true if the key was new.
  bool put(const K& key, const V& value) const {
    const std::string k = detail::encode(key), v = detail::encode(value);
    return detail::run(ref_, detail::script::map_put, kind(), true, {k, v}).int_at(0) == 1;
  }
  // true if the key was there.
  bool erase(const K& key) const {
    const std::string k = detail::encode(key);
    return detail::run(ref_, detail::script::map_erase, kind(), true, {k}).int_at(0) == 1;
  }
  // Combines operand into the entry (absent: becomes operand); returns the new value.
  V merge(const K& key, const V& operand, merge_op op) const
    requires numeric<V>
  {
    const std::string k = detail::encode(key), x = detail::encode(operand);
    // The value type's range, for integer adds ('' when Redis' own 64-bit checks suffice).
    static const std::string lo = std::is_same_v<V, std::int64_t> || std::floating_point<V> ? "" : detail::encode(std::numeric_limits<V>::lowest());
    static const std::string hi = std::is_same_v<V, std::int64_t> || std::floating_point<V> ? "" : detail::encode(std::numeric_limits<V>::max());
    const char* name = op == merge_op::add ? "add" : op == merge_op::min ? "min" : "max";
    detail::reply r = detail::run(ref_, detail::script::map_merge, kind(), true, {k, x, name, detail::numeric_class<V>(), lo, hi});
    return detail::decode<V>(r.str_at(0));
  }
  [[nodiscard]] std::int64_t size() const { return detail::run(ref_, detail::script::map_size, kind(), false, {}).int_at(0); }

  // Every entry, read at one instant (one script: for maps that fit in a reply comfortably).
  [[nodiscard]] std::vector<std::pair<K, V>> snapshot() const {
    return entries_of(detail::run(ref_, detail::script::map_entries, kind(), false, {}), 0);
  }
  // One step of an iteration over a map of any size: start with cursor "0", continue with the
  // returned cursor until it is "0" again. Not a snapshot: an entry present throughout is
  // returned at least once (possibly twice), changes made meanwhile may or may not be seen.
  struct page {
    std::string cursor;
    std::vector<std::pair<K, V>> entries;
  };
  [[nodiscard]] page scan(const std::string& cursor = "0", int count = 256) const {
    const std::string c = std::to_string(std::max(count, 1));
    detail::reply r = detail::run(ref_, detail::script::map_scan, kind(), false, {cursor, c});
    return page{r.str_at(0), entries_of(r, 1)};
  }

  static const detail::kind_info& kind() {
    static const detail::kind_info k{"map|" + detail::type_tag<K>() + "|" + detail::type_tag<V>(),
                                     "map<" + detail::type_name<K>() + ", " + detail::type_name<V>() + ">"};
    return k;
  }


 private:
  friend class shared::store;
  explicit map(detail::object_ref ref) : handle(std::move(ref)) {}

  static std::vector<std::pair<K, V>> entries_of(const detail::reply& r, std::size_t first) {
    std::vector<std::pair<K, V>> out;
    for (std::size_t i = first; i + 1 < r.elements.size(); i += 2)
      out.emplace_back(detail::decode<K>(r.elements[i].str), detail::decode<V>(r.elements[i + 1].str));
    return out;
  }
};

}  // namespace cppless::shared
