// Writing JSON strings by hand where a JSON library would cost more than it gives (the manifest,
// invocation traces): escapes quotes, backslashes and control characters.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace cppless::detail {

inline void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

}  // namespace cppless::detail
