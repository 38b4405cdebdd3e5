// The non-template parts of the codec: hex, readable type names, decode failures.
#include <cppless/shared/codec.hpp>

namespace cppless::shared::detail {

std::string type_from_pretty(std::string_view pretty) {
  // Clang: "... pretty_function() [T = std::vector<int>]"; GCC: "... [with T = std::vector<int>; ...]".
  auto at = pretty.find("T = ");
  if (at == std::string_view::npos) return std::string(pretty);
  std::string_view rest = pretty.substr(at + 4);
  int depth = 0;
  std::size_t end = 0;
  for (; end < rest.size(); ++end) {
    char c = rest[end];
    if (c == '<' || c == '(' || c == '[') ++depth;
    if (c == '>' || c == ')') --depth;
    if (c == ']') {
      if (depth == 0) break;
      --depth;
    }
    if (c == ';' && depth == 0) break;
  }
  return std::string(rest.substr(0, end));
}

void throw_undecodable(std::string_view type, std::string_view why) {
  throw type_mismatch("cppless::shared: a stored value does not decode as " + std::string(type) + " (" +
                      std::string(why.substr(0, 64)) + ")");
}

}  // namespace cppless::shared::detail
