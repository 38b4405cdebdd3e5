// Reading the manifest (the entry points) of a built cppless executable.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace cppless::tools {

struct manifest_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs `executable` in manifest mode (static initialisation only: its main never runs) and
// returns the parsed manifest. Refuses files that are not cppless executables. `runner` goes
// before the executable on the command line (an emulator for another architecture's build).
nlohmann::json read_manifest(const std::string& executable, const std::vector<std::string>& runner = {});

}  // namespace cppless::tools
