// counter: three scripts over one hash field (HINCRBY: exact 64-bit, refuses overflow).
#include <cppless/shared/counter.hpp>

#include <string>

namespace cppless::shared {

const detail::kind_info& counter::kind() {
  static const detail::kind_info k{"counter", "counter"};
  return k;
}

std::int64_t counter::add(std::int64_t delta) const {
  const std::string d = std::to_string(delta);
  return detail::run(ref_, detail::script::counter_add, kind(), true, {d}).int_at(0);
}

std::int64_t counter::get() const { return detail::run(ref_, detail::script::counter_get, kind(), false, {}).int_at(0); }

std::int64_t counter::reset(std::int64_t value) const {
  const std::string v = std::to_string(value);
  return detail::run(ref_, detail::script::counter_set, kind(), true, {v}).int_at(0);
}

}  // namespace cppless::shared
