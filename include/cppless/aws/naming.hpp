// cppless/aws/naming.hpp — the Lambda function name of an entry, shared by the invoking
// dispatcher and by `cppless deploy`, so both arrive at the same name independently.
//
//   <prefix>-<16 hex digits>      prefix: the target (executable) name, sanitised and cut so
//                                 the whole name fits Lambda's 64 characters
//   hash = hash64(entry id + "|" + config_key(...))
//
// A changed config is a new function (the old one stays until `cppless functions remove`).
#pragma once

#include <cppless/identity.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace cppless::aws {

inline constexpr std::size_t max_function_name = 64;

// Lambda names allow [A-Za-z0-9_-]; everything else becomes '-'.
inline std::string sanitize_prefix(std::string_view prefix) {
  std::string out;
  for (char c : prefix) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    out += ok ? c : '-';
  }
  if (out.empty()) out = "cppless";
  const std::size_t room = max_function_name - 17;  // '-' and 16 hex digits
  if (out.size() > room) out.resize(room);
  return out;
}

// The config fields that shape a function, as the manifest spells them (arch: "native",
// "x86_64" or "arm64"). Spelled out here, not taken from config_values::describe(), so that the
// host and the deploy tool (which only sees the manifest) cannot drift apart.
inline std::string config_key(unsigned memory_mb, unsigned timeout_s, unsigned storage_mb, std::string_view arch) {
  return "memory=" + std::to_string(memory_mb) + ",timeout=" + std::to_string(timeout_s) +
         ",storage=" + std::to_string(storage_mb) + ",arch=" + std::string(arch);
}

inline std::string function_name(std::string_view prefix, std::string_view entry_id, std::string_view config_key) {
  std::string key(entry_id);
  key += '|';
  key += config_key;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash64(key)));
  return sanitize_prefix(prefix) + "-" + hex;
}

}  // namespace cppless::aws
