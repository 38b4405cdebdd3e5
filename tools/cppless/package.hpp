// The zip `cppless deploy` uploads, and `cppless package` writes to disk for inspection.
//
// A package holds `bootstrap` (a shell script that puts lib/ on the library path and execs the
// program), bin/<executable>, and — for an executable of this machine's architecture — the
// shared libraries ldd lists except the C library family provided.al2023 has. Every ELF file
// in it is checked against the Lambda OS (elf_check.hpp): one that needs a newer glibc or C++
// runtime is refused with the file and symbol, unless the check is waived for a server on this
// machine. Entries have a fixed order and fixed times: an unchanged build gives the same zip.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cppless::tools {

struct package_options {
  std::string architecture;  // "x86_64" or "arm64"; empty: the executable's own
  bool os_check = true;      // false: skip the Lambda OS check (a local server on this machine)
};

struct lambda_package {
  std::string zip;                    // the bytes
  std::vector<std::string> contents;  // entry names in order
  std::string architecture;           // Lambda's name of the executable's architecture
};

lambda_package build_package(const std::string& executable, const package_options& options);

// The manifest of a cppless executable of either architecture: an arm64 build on an x86_64
// machine is run under qemu-aarch64(-static) with QEMU_LD_PREFIX or /usr/aarch64-linux-gnu.
nlohmann::json read_function_manifest(const std::string& executable);

// The file name `cppless package` gives a package: <executable>-<architecture>.zip.
std::string package_file_name(const std::string& executable, const std::string& architecture);

}  // namespace cppless::tools
