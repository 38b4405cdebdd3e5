#include "redis_fixture.hpp"

#include <hiredis/hiredis.h>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>
#include <stdexcept>

namespace cppless::shared::testing {

cppless::testing::local_redis& server() {
  static cppless::testing::local_redis redis;
  return redis;
}

void shared_test::SetUp() {
  // Short budgets so failure tests end quickly; real runs keep the defaults.
  process_settings().retry_budget = milliseconds(1500);
  store_ = store::connect(server().url());
}

void shared_test::TearDown() {
  try {
    store_.remove_namespace();
  } catch (const std::exception&) {
    // A test that stopped the server has nothing left to remove.
  }
}

std::vector<std::string> in_processes(int n, const std::function<std::string(int)>& body) {
  struct child {
    pid_t pid;
    int fd;
    std::string out;
  };
  std::vector<child> children;
  for (int i = 0; i < n; ++i) {
    int p[2];
    if (::pipe(p) != 0) throw std::runtime_error("pipe failed");
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(p[0]);
      int code = 0;
      std::string out;
      try {
        out = body(i);
      } catch (const std::exception& e) {
        out = std::string("child ") + std::to_string(i) + " threw: " + e.what();
        code = 1;
      }
      for (std::size_t done = 0; done < out.size();) {
        ssize_t w = ::write(p[1], out.data() + done, out.size() - done);
        if (w <= 0) break;
        done += static_cast<std::size_t>(w);
      }
      ::_exit(code);  // no static destructors, no gtest teardown in the child
    }
    ::close(p[1]);
    children.push_back({pid, p[0], {}});
  }
  // Read all pipes together, so no child blocks on a full pipe while another is being read.
  std::size_t open = children.size();
  while (open > 0) {
    std::vector<pollfd> fds;
    for (auto& c : children)
      if (c.fd >= 0) fds.push_back({c.fd, POLLIN, 0});
    ::poll(fds.data(), fds.size(), -1);
    for (auto& c : children) {
      if (c.fd < 0) continue;
      for (auto& f : fds) {
        if (f.fd != c.fd || f.revents == 0) continue;
        char buf[4096];
        ssize_t r = ::read(c.fd, buf, sizeof buf);
        if (r > 0) {
          c.out.append(buf, static_cast<std::size_t>(r));
        } else {
          ::close(c.fd);
          c.fd = -1;
          --open;
        }
      }
    }
  }
  std::vector<std::string> outs;
  for (auto& c : children) {
    int status = 0;
    ::waitpid(c.pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ADD_FAILURE() << "worker process failed: " << c.out;
    outs.push_back(std::move(c.out));
  }
  return outs;
}

std::string admin(const cppless::testing::local_redis& redis, const std::vector<std::string>& argv, const std::string& password) {
  redisContext* ctx = redisConnect("127.0.0.1", redis.port());
  if (ctx == nullptr || ctx->err) throw std::runtime_error("admin connection failed");
  auto run = [&](const std::vector<std::string>& args) {
    std::vector<const char*> p;
    std::vector<size_t> l;
    for (auto& a : args) {
      p.push_back(a.data());
      l.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(ctx, static_cast<int>(args.size()), p.data(), l.data()));
    if (r == nullptr) throw std::runtime_error("admin command failed");
    std::string out = r->type == REDIS_REPLY_INTEGER ? std::to_string(r->integer)
                      : r->str != nullptr            ? std::string(r->str, r->len)
                                                     : std::string();
    freeReplyObject(r);
    return out;
  };
  if (!password.empty()) run({"AUTH", password});
  std::string out = run(argv);
  redisFree(ctx);
  return out;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

int blocked_clients(const cppless::testing::local_redis& redis) {
  const std::string info = admin(redis, {"INFO", "clients"});
  const std::string field = "blocked_clients:";
  auto at = info.find(field);
  if (at == std::string::npos) throw std::runtime_error("INFO clients without blocked_clients: " + info);
  return std::stoi(info.substr(at + field.size()));
}

}  // namespace cppless::shared::testing
