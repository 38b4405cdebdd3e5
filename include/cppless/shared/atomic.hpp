// cppless/shared/atomic.hpp — a shared value of any serializable type with load, store, exchange
// and compare-and-swap (Crucial's AtomicInt/AtomicBoolean/AtomicByteArray, for any T).
//
// compare_exchange compares the stored encoding with the encoding of `expected`, as std::atomic
// compares object representations: equal values of types with a canonical encoding (integers,
// strings, containers of them) compare equal; for floating point, -0.0 and 0.0 differ.
#pragma once

#include <cppless/shared/client.hpp>
#include <cppless/shared/codec.hpp>

namespace cppless::shared {

class store;

template <class T>
class atomic : public detail::handle {
 public:
  atomic() = default;

  T load() const { return detail::decode<T>(detail::run(ref_, detail::script::atomic_load, kind(), false, {}).str_at(0)); }
  void store(const T& value) const {
    const std::string v = detail::encode(value);
    detail::run(ref_, detail::script::atomic_store, kind(), true, {v});
  }
  // Stores value and returns the previous one.
  T exchange(const T& value) const {
    const std::string v = detail::encode(value);
    return detail::decode<T>(detail::run(ref_, detail::script::atomic_exchange, kind(), true, {v}).str_at(0));
  }
  // If the value equals `expected`, replaces it with `desired` and returns true; otherwise loads
  // the current value into `expected` and returns false.
  bool compare_exchange(T& expected, const T& desired) const {
    const std::string e = detail::encode(expected), d = detail::encode(desired);
    detail::reply r = detail::run(ref_, detail::script::atomic_cas, kind(), true, {e, d});
    if (r.int_at(0) == 1) return true;
    expected = detail::decode<T>(r.str_at(1));
    return false;
  }

  static const detail::kind_info& kind() {
    static const detail::kind_info k{"atomic|" + detail::type_tag<T>(), "atomic<" + detail::type_name<T>() + ">"};
    return k;
  }

 private:
  friend class shared::store;
  explicit atomic(detail::object_ref ref) : handle(std::move(ref)) {}
};

}  // namespace cppless::shared
