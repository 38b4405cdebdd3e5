// Reading the manifest (the entry points) of a built cppless executable.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace cppless::tools {

struct manifest_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs `executable` in manifest mode (static initialisation only: its main never runs) and
// returns the parsed manifest. Refuses files that are not cppless executables.
nlohmann::json read_manifest(const std::string& executable);

}  // namespace cppless::tools
