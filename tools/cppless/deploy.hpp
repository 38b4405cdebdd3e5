// `cppless deploy` and `cppless functions list|remove`: the AWS Lambda deployment of a cppless
// executable (one function per manifest entry, named like the dispatcher names them).
#pragma once

#include <CLI/CLI.hpp>

namespace cppless::tools {

// Adds the subcommands; they run (and exit the process on failure) when parsed.
void add_aws_commands(CLI::App& app);

}  // namespace cppless::tools
