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

}  // namespace cppless::shared::detail
