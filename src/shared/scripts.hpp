// The Lua source and SHA-1 of every server-side operation (private to the library).
#pragma once

#include <cppless/shared/client.hpp>

#include <string>

namespace cppless::shared::detail {

struct script_source {
  std::string body;
  std::string sha;  // hex SHA-1 of body: what EVALSHA names
};

const script_source& source_of(script s);

// How long the server keeps a client's call record for an object after the client's last change
// to it. A retry must arrive within it to be recognised; the retry budget is far shorter.
inline constexpr milliseconds record_ttl{600'000};

// The Lua of a user-defined operation's function (what runs between `function(KEYS, ARGV)` and
// `end`): the type check, the call record when it changes state, the body run under pcall with the
// object restored if it raises (error CPPLESS_USER <cause>), the result recorded.
std::string wrap_user_operation(std::string_view body, bool changes);

}  // namespace cppless::shared::detail
