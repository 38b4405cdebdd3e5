// cppless/shared/best.hpp — the best value found so far and what achieved it (a branch-and-bound
// incumbent: the bound every worker prunes against, and the solution that set it).
//
// offer(value, payload) replaces both together, atomically, if value is strictly better (greater
// when maximizing, smaller when minimizing), and says whether it did. Values are numbers, compared
// inside Redis (integers exactly); the payload is any serializable type. Before the first offer,
// value() is the worst value of V (lowest() or -inf when maximizing) and there is no payload.
#pragma once

#include <cppless/shared/client.hpp>
#include <cppless/shared/codec.hpp>

#include <limits>
#include <optional>

namespace cppless::shared {

class store;

enum class direction { maximize, minimize };
inline constexpr direction maximize = direction::maximize;
inline constexpr direction minimize = direction::minimize;

template <numeric V, class P>
struct best_snapshot {
  V value;
  std::optional<P> payload;  // empty until the first offer
};

template <numeric V, class P>
class best : public detail::handle {
 public:
  best() = default;

  // Atomically replaces value and payload if value is strictly better; true if it did.
  bool offer(const V& value, const P& payload) const {
    const std::string v = detail::encode(value), p = detail::encode(payload);
    return detail::run(ref_, detail::script::best_offer, kind_for(dir_), true,
                       {v, p, detail::numeric_class<V>(), dir_ == maximize ? "max" : "min"})
               .int_at(0) == 1;
  }
  // The best value so far (one round trip: what a pruning test reads).
  V value() const {
    detail::reply r = detail::run(ref_, detail::script::best_get, kind_for(dir_), false, {"0"});
    return r.int_at(0) == 1 ? detail::decode<V>(r.str_at(1)) : worst(dir_);
  }
  std::optional<P> payload() const { return get().payload; }
  // Value and payload read together (consistent with each other).
  best_snapshot<V, P> get() const {
    detail::reply r = detail::run(ref_, detail::script::best_get, kind_for(dir_), false, {"1"});
    if (r.int_at(0) == 0) return {worst(dir_), std::nullopt};
    return {detail::decode<V>(r.str_at(1)), detail::decode<P>(r.str_at(2))};
  }
  [[nodiscard]] direction goal() const noexcept { return dir_; }
  // The value before any offer.
  static constexpr V worst(direction d) {
    if constexpr (std::numeric_limits<V>::has_infinity)
      return d == maximize ? -std::numeric_limits<V>::infinity() : std::numeric_limits<V>::infinity();
    else
      return d == maximize ? std::numeric_limits<V>::lowest() : std::numeric_limits<V>::max();
  }

  static const detail::kind_info& kind_for(direction d) {
    static const detail::kind_info max{"best|" + detail::type_tag<V>() + "|" + detail::type_tag<P>() + "|max",
                                       "best<" + detail::type_name<V>() + ", " + detail::type_name<P>() + "> (maximize)"};
    static const detail::kind_info min{"best|" + detail::type_tag<V>() + "|" + detail::type_tag<P>() + "|min",
                                       "best<" + detail::type_name<V>() + ", " + detail::type_name<P>() + "> (minimize)"};
    return d == maximize ? max : min;
  }

  template <class Archive>
  void serialize(Archive& ar) {
    ar(ref_, dir_);
  }

 private:
  friend class shared::store;
  best(detail::object_ref ref, direction d) : handle(std::move(ref)), dir_(d) {}
  direction dir_ = maximize;
};

}  // namespace cppless::shared
