// What an ELF file needs from the system it runs on, and whether the Lambda OS has it.
//
// provided.al2023 has glibc 2.34 and GCC 11's libstdc++/libgcc_s (GLIBCXX_3.4.29, CXXABI_1.3.13,
// GCC_11): a file that needs a newer symbol version fails to load there before main, with
// Runtime.ExitError on every call. The package step reads each ELF file's version needs
// (.gnu.version_r, and one symbol per version from .dynsym/.gnu.version) and refuses those.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cppless::tools {

struct elf_version_need {
  std::string library;  // e.g. libc.so.6
  std::string version;  // e.g. GLIBC_2.36
  std::string symbol;   // one symbol bound to it (empty if none is)
};

struct elf_info {
  std::string architecture;     // "x86_64", "arm64" (Lambda's names), else the e_machine number
  std::vector<std::string> needed;  // DT_NEEDED
  std::vector<elf_version_need> versions;
};

bool is_elf(std::string_view bytes);
// Throws std::runtime_error naming `name` when the file is not a 64-bit little-endian ELF file
// or its tables point outside it.
elf_info read_elf(std::string_view bytes, const std::string& name);

// The version needs above provided.al2023's, each as "<name> needs <version> (symbol <s>, from <lib>)".
std::vector<std::string> above_lambda_os(const elf_info& info, const std::string& name);

}  // namespace cppless::tools
