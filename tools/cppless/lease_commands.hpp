// `cppless resource-manager`, `cppless executor-manager` and `cppless lease-status`: the servers
// of the lease backend (src/lease) and a look at one lease.
#pragma once

#include <CLI/CLI.hpp>

namespace cppless::tools {
void add_lease_commands(CLI::App& app);
}
