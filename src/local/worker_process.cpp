#include "worker_process.hpp"

#include <cppless/error.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace cppless::local {

namespace {

// Workers ask the kernel to kill them when their parent *thread* ends (PR_SET_PDEATHSIG). A
// user thread that dispatched first and then ended would take the workers with it, so every
// worker is started from one thread that lives as long as the process.
class spawner {
 public:
  static spawner& get() {
    static spawner* instance = new spawner();  // never destroyed: its thread may outlive statics
    return *instance;
  }

  worker_process run(std::function<worker_process()> job) {
    std::unique_lock lock(mutex_);
    std::optional<worker_process> result;
    std::exception_ptr failure;
    jobs_.push_back([&] {
      try {
        result = job();
      } catch (...) {
        failure = std::current_exception();
      }
    });
    wake_.notify_all();
    done_.wait(lock, [&] { return result || failure; });
    if (failure) std::rethrow_exception(failure);
    return *result;
  }

 private:
  spawner() { std::thread([this] { loop(); }).detach(); }

  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return !jobs_.empty(); });
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      job();
      done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<std::function<void()>> jobs_;
};

worker_process spawn_now(int region_fd, int doorbell_fd, const worker_settings& settings) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 onto fixed numbers clears close-on-exec there: only these two fds reach the worker.
  posix_spawn_file_actions_adddup2(&actions, region_fd, worker_region_fd);
  posix_spawn_file_actions_adddup2(&actions, doorbell_fd, worker_doorbell_fd);

  std::string setting = std::string(worker_env) + "=" + std::to_string(worker_region_fd) + ":" +
                        std::to_string(worker_doorbell_fd) + ":" + std::to_string(settings.hot_poll.count()) + ":" +
                        std::to_string(::getpid()) + ":" + std::to_string(settings.max_payload);
  std::vector<char*> env;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "CPPLESS_WORKER=", 15) != 0) env.push_back(*e);
  env.push_back(setting.data());
  env.push_back(nullptr);

  char name[] = "cppless-worker";
  char* argv[] = {name, nullptr};
  worker_process p;
  int rc = posix_spawn(&p.pid, "/proc/self/exe", &actions, nullptr, argv, env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw worker_crashed(std::string("cppless local: cannot start a worker process: ") + std::strerror(rc));
  p.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, p.pid, 0));
  if (p.pidfd < 0) {
    int err = errno;
    ::kill(p.pid, SIGKILL);
    ::waitpid(p.pid, nullptr, 0);
    throw worker_crashed(std::string("cppless local: pidfd_open failed: ") + std::strerror(err));
  }
  return p;
}

}  // namespace

worker_process spawn_worker(int region_fd, int doorbell_fd, const worker_settings& settings) {
  return spawner::get().run([=] { return spawn_now(region_fd, doorbell_fd, settings); });
}

std::string reap_worker(const worker_process& p) {
  siginfo_t info{};
  int rc;
  do {
    rc = ::waitid(P_PID, static_cast<id_t>(p.pid), &info, WEXITED);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return "unknown end (waitid failed)";
  if (info.si_code == CLD_EXITED) return info.si_status == 0 ? "" : "exit code " + std::to_string(info.si_status);
  const int sig = info.si_status;
  const char* abbrev = sigabbrev_np(sig);
  return "signal " + std::to_string(sig) + " (SIG" + (abbrev ? abbrev : "?") + ": " + strsignal(sig) + ")";
}

}  // namespace cppless::local
