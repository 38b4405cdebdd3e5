// `cppless sh [--backend local] [-f FILE] 'command'`: /bin/sh -c on a local worker (this same
// executable in worker mode), output and exit status back to the caller.
#include "shell.hpp"

#include <cppless/cppless.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace cppless::tools {
namespace {

// What a shell command left: everything it wrote (stdout and stderr, interleaved as written) and
// its exit status (128 + signal when killed, as the shell reports it).
struct shell_result {
  std::string output;
  int status = 0;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(output, status);
  }
};

// Runs on the worker.
shell_result run_shell(const std::string& command) {
  int out[2];
  if (::pipe(out) != 0) return {std::string("cppless sh: pipe failed: ") + std::strerror(errno) + "\n", 127};
  pid_t pid = ::fork();
  if (pid < 0) return {std::string("cppless sh: fork failed: ") + std::strerror(errno) + "\n", 127};
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::close(out[0]);
    ::close(out[1]);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  shell_result r;
  char buf[65536];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    r.output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return r;
}

std::string request_id() {
  std::random_device rd;
  char id[40];
  std::snprintf(id, sizeof id, "%08x-%04x-%04x-%08x", rd(), rd() & 0xffff, rd() & 0xffff, rd());
  return id;
}

struct shell_args {
  std::string backend = "local";
  std::string file;
  std::string command;
  bool async = false;
};

int shell(const shell_args& a) {
  if (a.backend != "local") {
    std::cerr << "cppless sh: backend '" << a.backend
              << "' is not available to the shell yet (it needs the cppless tool deployed as a function); use --backend local\n";
    return 2;
  }
  if (a.async) {
    std::cerr << "cppless sh: --async is not available with the local backend (its workers end with this process)\n";
    return 2;
  }
  std::string command = a.command;
  if (!a.file.empty()) {
    std::ifstream in(a.file);
    if (!in) {
      std::cerr << "cppless sh: cannot read " << a.file << "\n";
      return 2;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    command = ss.str();
  }
  if (command.empty()) {
    std::cerr << "cppless sh: give a command, or a script with -f FILE\n";
    return 2;
  }
  cppless::local_options options;
  options.workers = 1;
  cppless::local_dispatcher dispatcher(options);
  auto inst = dispatcher.create_instance();
  const std::string id = request_id();
  const auto start = std::chrono::steady_clock::now();
  shell_result r = cppless::async(inst, [](const std::string& c) { return run_shell(c); }, command).get();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::cout << r.output << std::flush;
  std::fprintf(stderr, "RequestId: %s Duration: %.2f ms\n", id.c_str(), ms);
  return r.status;
}

}  // namespace

void add_shell_command(CLI::App& app) {
  auto args = std::make_shared<shell_args>();
  auto* cmd = app.add_subcommand("sh", "Run a shell command on a worker and print its output (Crucial's serverless shell)");
  cmd->add_option("command", args->command, "The command (run by /bin/sh -c)");
  cmd->add_option("-f,--file", args->file, "Run this script instead of a command");
  cmd->add_option("--backend", args->backend, "local (aws and lease are not available to the shell yet)");
  cmd->add_flag("--async", args->async, "Do not wait for the command (not with the local backend)");
  cmd->callback([args] {
    try {
      std::exit(shell(*args));
    } catch (const std::exception& e) {
      std::cerr << "cppless: " << e.what() << "\n";
      std::exit(1);
    }
  });
}

}  // namespace cppless::tools
