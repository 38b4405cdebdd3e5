// `cppless obj ...`: shared objects from the command line, so shell scripts running on many
// machines (or many workers) can count, meet and exchange values through Redis (Crucial's
// serverless shell glue). The store is CPPLESS_REDIS; the namespace --namespace, else
// CPPLESS_REDIS_NAMESPACE, else "cppless-cli" (a fixed one: separate invocations must meet).
#pragma once

#include <CLI/CLI.hpp>

namespace cppless::tools {

void add_object_commands(CLI::App& app);

}  // namespace cppless::tools
