// cppless/shared/write_once.hpp — a value written once and awaited by any number of readers
// (Crucial's Future; a shared, named std::promise/std::shared_future pair). Named for what it is,
// so it is not mistaken for cppless::future, the result of a dispatched call.
//
// set() a second time throws shared::already_set (a retry of the same call after a lost reply is
// recognized and succeeds once). get() blocks until the value is there, with a timeout.
#pragma once

#include <cppless/shared/client.hpp>
#include <cppless/shared/codec.hpp>
#include <cppless/shared/errors.hpp>
#include <cppless/shared/wait.hpp>

#include <optional>

namespace cppless::shared {

class store;

template <class T>
class write_once : public detail::handle {
 public:
  write_once() = default;

  void set(const T& value) const {
    const std::string v = detail::encode(value);
    detail::run(ref_, detail::script::future_set, kind(), true, {v});
  }
  // Throws shared::wait_timeout if no value arrives within `timeout`.
  T get(milliseconds timeout = default_wait) const {
    const auto deadline = detail::deadline_after(timeout);
    detail::session ses(ref_);
    if (auto v = peek(ses)) return std::move(*v);
    if (detail::await_event(ses, ref_, kind(), detail::script::future_register, detail::script::future_withdraw, deadline))
      if (auto v = peek(ses)) return std::move(*v);
    throw shared::wait_timeout("cppless::shared: write_once " + ref_.describe() + " was not set " + detail::after(timeout));
  }
  std::optional<T> try_get() const {
    detail::session ses(ref_);
    return peek(ses);
  }
  [[nodiscard]] bool ready() const { return try_get().has_value(); }

  static const detail::kind_info& kind() {
    static const detail::kind_info k{"future|" + detail::type_tag<T>(), "write_once<" + detail::type_name<T>() + ">"};
    return k;
  }

 private:
  friend class shared::store;
  explicit write_once(detail::object_ref ref) : handle(std::move(ref)) {}

  std::optional<T> peek(detail::session& ses) const {
    detail::reply r = ses.script(ref_, detail::script::future_get, kind(), false, {});
    if (r.str_at(0) != "1") return std::nullopt;
    return detail::decode<T>(r.str_at(1));
  }

};

template <class T>
using future [[deprecated("renamed cppless::shared::write_once")]] = write_once<T>;

}  // namespace cppless::shared
