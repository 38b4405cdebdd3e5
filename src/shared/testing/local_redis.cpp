// Starting and stopping a private redis-server (fork + exec; waits until it answers PING).
#include <cppless/error.hpp>
#include <cppless/testing/local_redis.hpp>

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <netinet/in.h>
#include <sstream>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <filesystem>

namespace cppless::testing {
namespace {

// A port the kernel just considered free (there is a window before redis binds it; start()
// retries with another port if redis cannot bind).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) ::close(fd);
    throw cppless::error(std::string("cppless::testing::local_redis: cannot find a free port: ") + std::strerror(errno));
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

// Connects and sends PING; any reply (+PONG, or -NOAUTH when a password is set) means it is up.
bool answers(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  bool ok = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    timeval tv{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    const char ping[] = "PING\r\n";
    char buf[64];
    ok = ::send(fd, ping, sizeof ping - 1, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof ping - 1) && ::recv(fd, buf, sizeof buf, 0) > 0;
  }
  ::close(fd);
  return ok;
}

std::string find_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  throw cppless::error("cppless::testing::local_redis: " + name + " not found on PATH (Debian: apt-get install redis-server)");
}

std::string tail_of(const std::string& file) {
  std::ifstream in(file);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return all.size() > 600 ? all.substr(all.size() - 600) : all;
}

}  // namespace

local_redis::local_redis() : local_redis(options{}) {}

local_redis::local_redis(options opts) : opts_(std::move(opts)) {
  char tmpl[] = "/tmp/cppless-redis-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr)
    throw cppless::error(std::string("cppless::testing::local_redis: cannot create a temporary directory: ") + std::strerror(errno));
  dir_ = tmpl;
  for (int attempt = 0;; ++attempt) {
    port_ = free_port();
    try {
      start();
      return;
    } catch (const cppless::error&) {
      if (attempt == 4) {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
        throw;
      }
    }
  }
}

local_redis::~local_redis() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string local_redis::url() const {
  return "redis://" + (opts_.password.empty() ? std::string() : ":" + opts_.password + "@") + "127.0.0.1:" + std::to_string(port_);
}

void local_redis::start() {
  const std::string exe = find_executable(opts_.executable);
  const std::string log = dir_ + "/redis.log";
  std::vector<std::string> args = {exe,          "--port",     std::to_string(port_), "--bind",     "127.0.0.1",
                                   "--save",     "",           "--appendonly",        "no",         "--dir",
                                   dir_,         "--logfile",  log,                   "--daemonize", "no",
                                   "--protected-mode", "no"};
  if (!opts_.password.empty()) args.insert(args.end(), {"--requirepass", opts_.password});
  args.insert(args.end(), opts_.extra_args.begin(), opts_.extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw cppless::error(std::string("cppless::testing::local_redis: fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // Only async-signal-safe calls here: the parent may have other threads.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  pid_ = pid;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!answers(port_)) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw cppless::error("cppless::testing::local_redis: redis-server exited on port " + std::to_string(port_) + ": " + tail_of(log));
    }
    if (std::chrono::steady_clock::now() > give_up) {
      stop();
      throw cppless::error("cppless::testing::local_redis: redis-server on port " + std::to_string(port_) + " did not answer within 10 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void local_redis::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > give_up) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  pid_ = -1;
}

void local_redis::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

void local_redis::restart() {
  stop();
  start();
}

}  // namespace cppless::testing
