#include "cluster_fixture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace lease_test {

using namespace std::chrono_literals;

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);  // polling interval of an observable condition
  }
  return condition();
}

cluster::cluster(long heartbeat_ms) {
  char tmpl[] = "/tmp/cppless-lease-test.XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  cluster_key_ = "cluster-key-0123456789abcdef";
  {
    std::ofstream s(dir_ + "/secrets");
    s << "# test secrets\n@managers " << cluster_key_ << "\nalice " << secret_of("alice") << "\nbob "
      << secret_of("bob") << "\n";
  }
  ::chmod((dir_ + "/secrets").c_str(), 0600);
  rm_ = spawn({CPPLESS_CLI, "resource-manager", "--listen", "127.0.0.1:0", "--secrets", dir_ + "/secrets",
               "--heartbeat-ms", std::to_string(heartbeat_ms)},
              {});
}

std::string cluster::secret_of(const std::string& user) const { return user + "-secret-0123456789"; }

cluster::~cluster() {
  for (auto& p : ems_) stop(p, SIGTERM);
  stop(rm_, SIGTERM);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

process cluster::spawn(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) env_s.push_back(*e);
  for (auto& e : env) env_s.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  process p;
  const int rc = ::posix_spawn(&p.pid, argv[0], &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0]);
  p.out_fd = out[0];
  // Its first line names the address it listens on.
  std::string line;
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (line.find('\n') == std::string::npos) {
    pollfd pf{p.out_fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (left <= 0 || ::poll(&pf, 1, static_cast<int>(left)) <= 0) throw std::runtime_error(args[1] + " did not start in time");
    char c;
    if (::read(p.out_fd, &c, 1) != 1) throw std::runtime_error(args[1] + " exited before it listened");
    line += c;
  }
  const auto at = line.find("listening on ");
  if (at == std::string::npos) throw std::runtime_error("unexpected first line: " + line);
  p.address = line.substr(at + 13);
  p.address.pop_back();
  return p;
}

process& cluster::add_manager(unsigned cores, unsigned memory_mb, std::vector<std::string> extra) {
  std::vector<std::string> args{CPPLESS_CLI, "executor-manager", "--resource-manager", "tcp://" + rm_.address,
                                "--cores", std::to_string(cores), "--memory", std::to_string(memory_mb),
                                "--listen", "127.0.0.1:0", "--cache-dir", dir_ + "/cache-" + std::to_string(ems_.size())};
  // Hot executors poll only briefly between the tests' calls (the machine is small).
  if (std::find(extra.begin(), extra.end(), "--hot-poll-us") == extra.end()) args.insert(args.end(), {"--hot-poll-us", "20000"});
#if CPPLESS_LEASE_TEST_SANITIZED
  // A sanitizer's shadow memory does not fit an address-space limit.
  args.insert(args.end(), {"--memory-enforcement", "none"});
#else
  if (std::getenv("LEASE_TEST_NO_LIMIT")) args.insert(args.end(), {"--memory-enforcement", "none"});
#endif
  for (auto& e : extra) args.push_back(e);
  ems_.push_back(spawn(args, {"CPPLESS_MANAGER_SECRET=" + cluster_key_}));
  return ems_.back();
}

cppless::lease_options cluster::client(const std::string& user) const {
  cppless::lease_options o;
  o.resource_manager = "tcp://" + rm_.address;
  o.user = user;
  o.secret = secret_of(user);
  return o;
}

void cluster::stop(process& p, int sig) {
  if (p.pid <= 0) return;
  ::kill(p.pid, sig);
  int status = 0;
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (::waitpid(p.pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      ::kill(p.pid, SIGKILL);
      ::waitpid(p.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(2ms);
  }
  if (p.out_fd >= 0) ::close(p.out_fd);
  p.out_fd = -1;
  p.pid = -1;
}

std::vector<pid_t> cluster::children_of(pid_t pid) {
  // Any thread of the manager may have started an executor: read every task's list.
  std::vector<pid_t> kids;
  std::error_code ec;
  for (auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "children");
    pid_t k;
    while (in >> k) kids.push_back(k);
  }
  return kids;
}

}  // namespace lease_test
