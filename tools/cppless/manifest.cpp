#include "manifest.hpp"

#include <cppless/worker.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

extern char** environ;

namespace cppless::tools {

namespace {
bool contains_marker(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return bytes.find(cppless::detail::executable_marker) != std::string::npos;
}
}  // namespace

nlohmann::json read_manifest(const std::string& executable, const std::vector<std::string>& runner) {
  struct stat st{};
  if (::stat(executable.c_str(), &st) != 0)
    throw manifest_error("cannot read '" + executable + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode) || ::access(executable.c_str(), X_OK) != 0)
    throw manifest_error("'" + executable + "' is not an executable file");
  if (!contains_marker(executable))
    throw manifest_error("'" + executable + "' is not linked with cppless (no cppless runtime inside); "
                         "link it with the cppless::cppless CMake target");

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw manifest_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  std::vector<char*> env;
  std::string flag = "CPPLESS_MANIFEST=1";
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "CPPLESS_", 8) != 0) env.push_back(*e);
  env.push_back(flag.data());
  env.push_back(nullptr);
  std::vector<std::string> args = runner;
  args.push_back(executable);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    throw manifest_error("cannot run '" + args[0] + "': " + std::strerror(rc));
  }
  std::string text;
  char buf[65536];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw manifest_error("'" + executable + "' failed while printing its manifest (status " + std::to_string(status) + ")");
  try {
    auto manifest = nlohmann::json::parse(text);
    if (!manifest.contains("entry_points")) throw manifest_error("no entry_points");
    return manifest;
  } catch (const std::exception& e) {
    throw manifest_error("'" + executable + "' printed no valid manifest: " + e.what());
  }
}

}  // namespace cppless::tools
