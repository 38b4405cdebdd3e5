#include "package.hpp"

#include "elf_check.hpp"
#include "manifest.hpp"

#include <sys/utsname.h>
#include <unistd.h>
#include <zip.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace cppless::tools {

namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string host_architecture() {
  utsname u{};
  ::uname(&u);
  const std::string m = u.machine;
  return m == "aarch64" ? "arm64" : m;
}

// Libraries provided.al2023 has (the C library family); everything else travels in the zip.
bool provided_by_lambda(const std::string& name) {
  static const char* system[] = {"linux-vdso", "linux-gate", "ld-linux", "libc.so", "libm.so", "libpthread.so",
                                 "libdl.so", "librt.so", "libresolv.so", "libutil.so"};
  for (const char* s : system)
    if (name.rfind(s, 0) == 0) return true;
  return false;
}

std::vector<std::pair<std::string, std::string>> shared_libraries(const std::string& exe) {
  std::vector<std::pair<std::string, std::string>> out;
  FILE* p = ::popen(("ldd '" + exe + "' 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    std::string l(line);
    const auto arrow = l.find(" => ");
    if (arrow == std::string::npos) continue;
    std::string name = l.substr(0, arrow);
    name.erase(0, name.find_first_not_of(" \t"));
    std::string path = l.substr(arrow + 4);
    path = path.substr(0, path.find(" ("));
    if (path.empty() || path[0] != '/' || provided_by_lambda(name)) continue;
    out.emplace_back(name, fs::canonical(path).string());
  }
  ::pclose(p);
  return out;
}

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = dirs.find(':', start) == std::string::npos ? dirs.size() : dirs.find(':', start);
    const std::string candidate = dirs.substr(start, end - start) + "/" + program;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

// The files of the package: (name in the zip, bytes, mode).
struct entry {
  std::string name, data;
  unsigned mode;
};

std::string zip_entries(const std::vector<entry>& entries) {
  const std::string tmp = fs::temp_directory_path() / ("cppless-package-" + std::to_string(::getpid()) + ".zip");
  int err = 0;
  zip_t* z = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!z) throw std::runtime_error("cannot create " + tmp);
  for (const auto& e : entries) {
    zip_source_t* src = zip_source_buffer(z, e.data.data(), e.data.size(), 0);  // not copied: entries outlive z
    const auto index = zip_file_add(z, e.name.c_str(), src, ZIP_FL_OVERWRITE);
    if (index < 0) {
      zip_source_free(src);
      zip_discard(z);
      throw std::runtime_error("cannot add " + e.name + " to " + tmp);
    }
    zip_file_set_mtime(z, static_cast<zip_uint64_t>(index), 315532800, 0);  // 1980-01-01
    zip_file_set_external_attributes(z, static_cast<zip_uint64_t>(index), 0, ZIP_OPSYS_UNIX, (0100000u | e.mode) << 16);
  }
  if (zip_close(z) != 0) {
    zip_discard(z);
    throw std::runtime_error("cannot write " + tmp);
  }
  std::string bytes = read_file(tmp);
  fs::remove(tmp);
  return bytes;
}

}  // namespace

std::string package_file_name(const std::string& executable, const std::string& architecture) {
  return fs::path(executable).filename().string() + "-" + architecture + ".zip";
}

nlohmann::json read_function_manifest(const std::string& executable) {
  const elf_info info = read_elf(read_file(executable), executable);
  if (info.architecture == host_architecture() || info.architecture != "arm64") return read_manifest(executable);
  std::string qemu = find_on_path("qemu-aarch64-static");
  if (qemu.empty()) qemu = find_on_path("qemu-aarch64");
  if (qemu.empty())
    throw std::runtime_error("reading the manifest of the arm64 executable " + executable +
                             " on this machine needs qemu-aarch64-static (Debian: qemu-user-static and "
                             "libc6-arm64-cross)");
  const char* prefix = std::getenv("QEMU_LD_PREFIX");
  const std::string sysroot = prefix && *prefix ? prefix : "/usr/aarch64-linux-gnu";
  return read_manifest(executable, {qemu, "-L", sysroot});
}

lambda_package build_package(const std::string& exe, const package_options& options) {
  const std::string program = read_file(exe);
  const elf_info info = read_elf(program, exe);
  if (info.architecture != "x86_64" && info.architecture != "arm64")
    throw std::runtime_error(exe + " is built for " + info.architecture + "; Lambda runs x86_64 and arm64");
  if (!options.architecture.empty() && options.architecture != info.architecture)
    throw std::runtime_error(exe + " is built for " + info.architecture + ", not " + options.architecture +
                             "; build it for " + options.architecture +
                             " with the function build (aws_lambda_serverless_target(... ARCHITECTURE " +
                             options.architecture + "), docs/aws.md)");
  const std::string base = fs::path(exe).filename();
  std::vector<entry> entries;
  // CPPLESS_BOOTSTRAP_EMULATOR is never set on Lambda; tests set it to run an arm64 package
  // under qemu on a machine without binfmt_misc.
  entries.push_back({"bootstrap",
                     "#!/bin/sh\n# cppless: start the function's executable with its libraries\n"
                     "export LD_LIBRARY_PATH=\"$LAMBDA_TASK_ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"\n"
                     "exec $CPPLESS_BOOTSTRAP_EMULATOR \"$LAMBDA_TASK_ROOT/bin/" + base + "\" \"$@\"\n",
                     0755});
  entries.push_back({"bin/" + base, program, 0755});
  if (info.architecture == host_architecture()) {
    for (auto& [name, path] : shared_libraries(exe)) entries.push_back({"lib/" + name, read_file(path), 0644});
  } else {
    // ldd cannot follow another architecture's libraries: such a build must need none.
    for (const auto& needed : info.needed)
      if (!provided_by_lambda(needed))
        throw std::runtime_error("bin/" + base + " needs " + needed + ", which provided.al2023 does not have and "
                                 "which cannot be collected for " + info.architecture +
                                 " on this machine: link it statically into the function build");
  }
  if (options.os_check) {
    std::vector<std::string> problems;
    for (const auto& e : entries)
      if (is_elf(e.data))
        for (auto& p : above_lambda_os(read_elf(e.data, e.name), e.name)) problems.push_back(std::move(p));
    if (!problems.empty()) {
      std::string message = "the package would not start on provided.al2023 (glibc 2.34, GCC 11's C++ runtime):";
      for (const auto& p : problems) message += "\n  " + p;
      message += "\nbuild the functions with the function build (zig, glibc 2.34: aws_lambda_serverless_target, "
                 "docs/aws.md)";
      throw std::runtime_error(message);
    }
  }
  lambda_package out;
  out.architecture = info.architecture;
  for (const auto& e : entries) out.contents.push_back(e.name);
  out.zip = zip_entries(entries);
  return out;
}

}  // namespace cppless::tools
