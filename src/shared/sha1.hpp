// SHA-1, only to name Lua scripts for EVALSHA (Redis identifies cached scripts by it); not used
// for anything that needs a secure hash.
#pragma once

#include <string>
#include <string_view>

namespace cppless::shared::detail {

// Lower-case hex digest, as Redis' SCRIPT LOAD returns it.
std::string sha1_hex(std::string_view data);

}  // namespace cppless::shared::detail
