// `cppless sh`: the serverless shell (Crucial's sshell): a shell command runs on a worker and its
// output comes back, followed by Crucial's "RequestId: ... Duration: ... ms" line on stderr.
// Scripts share state through `cppless obj` (the worker inherits CPPLESS_REDIS and CPPLESS).
#pragma once

#include <CLI/CLI.hpp>

namespace cppless::tools {

void add_shell_command(CLI::App& app);

}  // namespace cppless::tools
