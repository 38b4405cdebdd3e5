// cppless/shared/custom.hpp — user-defined object types: operations whose Lua bodies run inside
// Redis (Redis Functions), next to the object's state, called through a handle like the built-in
// objects (Crucial's user-defined shared objects).
//
//   cppless::shared::object_type vec{"vec", {
//       {"push", "local n = redis.call('HINCRBY', K, 'n', 1) redis.call('HSET', K, 'i' .. n, ARGS[1]) return n"},
//       {"sum", "local s = 0 for i = 1, tonumber(redis.call('HGET', K, 'n') or 0) do s = s + redis.call('HGET', K, 'i' .. i) end return s", false}}};
//   store.define(vec);                                  // loads the library on the server(s)
//   auto v = store.custom("vec", "numbers");
//   v.call<std::int64_t>("push", 5);                    // -> 1
//
// A body sees K (the object's Redis hash; fields starting with '_' are reserved) and ARGS (the
// call's arguments as strings) and returns a string, an integer or nothing. It may change only K.
// Each operation is wrapped like the built-in ones: the object's type is checked, a changing
// operation carries an exactly-once call record, and a body that raises leaves K as it was
// (restored) and ends in operation_error naming the object, the operation and the cause.
#pragma once

#include <cppless/shared/client.hpp>
#include <cppless/shared/errors.hpp>

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cppless::shared {

class store;

struct operation {
  std::string name;  // letters, digits and '_'
  std::string body;  // Lua, as described above
  bool changes = true;
};

struct object_type {
  std::string name;  // letters, digits and '_'
  std::vector<operation> operations;
};

namespace detail {
// The Redis Functions library of a type (its code), checking the names.
std::string library_of(const object_type& type);
// Remembers a defined type in this process (a server that lost the library gets it again).
void remember_type(const object_type& type);
// Runs an operation: FCALL with the call id and arguments; reloads the library once if the server
// does not have it (and this process defined the type). Throws operation_error for a raising body.
reply call_operation(const object_ref& obj, const std::string& type, std::string_view op, std::vector<std::string> args);

template <class T>
std::string to_arg(const T& v) {
  if constexpr (std::is_arithmetic_v<T>) {
    return std::to_string(v);
  } else {
    return std::string(std::string_view(v));
  }
}
}  // namespace detail

// A handle on an object of a user-defined type.
class custom_object : public detail::handle {
 public:
  custom_object() = default;

  // Runs operation `op` with the arguments (numbers as decimal text, strings as they are);
  // R: std::string, an integer type, double, or void.
  template <class R = std::string, class... Args>
  R call(std::string_view op, const Args&... args) const {
    detail::reply r = detail::call_operation(ref_, type_, op, {detail::to_arg(args)...});
    if constexpr (std::is_void_v<R>) {
      return;
    } else if constexpr (std::is_integral_v<R>) {
      return static_cast<R>(r.int_at(0));
    } else if constexpr (std::is_floating_point_v<R>) {
      return static_cast<R>(std::stod(r.str_at(0).empty() ? std::to_string(r.int_at(0)) : r.str_at(0)));
    } else {
      const auto& e = r.elements.empty() ? r : r.elements[0];
      return e.type == detail::reply::kind::integer ? std::to_string(e.integer) : e.str;
    }
  }
  [[nodiscard]] const std::string& type() const noexcept { return type_; }
  static detail::kind_info kind_of(const std::string& type) { return {"custom|" + type, "custom object of type '" + type + "'"}; }

  template <class Archive>
  void serialize(Archive& ar) {
    ar(ref_, type_);
  }

 private:
  friend class store;
  custom_object(detail::object_ref ref, std::string type) : handle(std::move(ref)), type_(std::move(type)) {}
  std::string type_;
};

}  // namespace cppless::shared
