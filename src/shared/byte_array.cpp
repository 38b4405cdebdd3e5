// byte_array: BITFIELD u8 operations on one Redis string, inside the usual scripts.
#include <cppless/shared/byte_array.hpp>

#include <string>

namespace cppless::shared {

const detail::kind_info& byte_array::kind() {
  static const detail::kind_info k{"byte_array", "byte_array"};
  return k;
}

std::uint8_t byte_array::get(std::int64_t index) const {
  const std::string i = std::to_string(index);
  return static_cast<std::uint8_t>(detail::run(ref_, detail::script::bytes_get, kind(), false, {i}).int_at(0));
}

std::uint8_t byte_array::set(std::int64_t index, std::uint8_t value) const {
  const std::string i = std::to_string(index), v = std::to_string(value);
  return static_cast<std::uint8_t>(detail::run(ref_, detail::script::bytes_set, kind(), true, {i, v}).int_at(0));
}

std::uint8_t byte_array::add(std::int64_t index, int delta) const {
  const std::string i = std::to_string(index), d = std::to_string(delta % 256);
  return static_cast<std::uint8_t>(detail::run(ref_, detail::script::bytes_add, kind(), true, {i, d}).int_at(0));
}

bool byte_array::compare_exchange(std::int64_t index, std::uint8_t& expected, std::uint8_t desired) const {
  const std::string i = std::to_string(index), e = std::to_string(expected), d = std::to_string(desired);
  detail::reply r = detail::run(ref_, detail::script::bytes_cas, kind(), true, {i, e, d});
  if (r.int_at(0) == 1) return true;
  expected = static_cast<std::uint8_t>(r.int_at(1));
  return false;
}

std::vector<std::uint8_t> byte_array::snapshot() const {
  detail::reply r = detail::run(ref_, detail::script::bytes_all, kind(), false, {});
  const std::string& bytes = r.str_at(1);
  std::vector<std::uint8_t> out(static_cast<std::size_t>(size_), 0);  // bytes never written are 0
  for (std::size_t i = 0; i < bytes.size() && i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(bytes[i]);
  return out;
}

}  // namespace cppless::shared
