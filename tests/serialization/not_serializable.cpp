// Must NOT compile: ctest (serialization_static_assert_message) expects cppless' static_assert
// message for a type without serialization. Not part of any executable.
#include <cppless/archive.hpp>

#include <string_view>

int main() {
  cppless::byte_buffer out;
  cppless::output_archive ar(out);
  std::string_view not_owned = "a view cannot travel";
  ar(not_owned);
}
