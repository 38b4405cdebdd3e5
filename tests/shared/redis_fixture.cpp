#include "redis_fixture.hpp"

#include <cppless/testing/local_cluster.hpp>

#include <hiredis/hiredis.h>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>
#include <stdexcept>

namespace cppless::shared::testing {

cppless::testing::local_redis& server() {
  static cppless::testing::local_redis redis;
  return redis;
}

namespace {
cppless::testing::local_cluster& cluster() {
  static cppless::testing::local_cluster c(cppless::testing::local_cluster::options{.masters = 3, .replicas = 1});
  return c;
}
}  // namespace

bool on_cluster() {
  const char* v = std::getenv("CPPLESS_TEST_CLUSTER");
  return v != nullptr && std::string(v) == "1";
}

std::string target_url() { return on_cluster() ? cluster().url() : server().url(); }

std::string admin_target(const std::vector<std::string>& argv) {
  if (!on_cluster()) return admin(server(), argv);
  int port = cluster().node(0).port();
  for (int hop = 0; hop < 5; ++hop) {
    std::string out = cppless::testing::local_cluster::command(port, argv);
    if (!out.starts_with("MOVED ")) return out;
    port = std::stoi(out.substr(out.rfind(':') + 1));
  }
  throw std::runtime_error("admin_target: too many redirects");
}

int blocked_clients_target() {
  if (!on_cluster()) return blocked_clients(server());
  int sum = 0;
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    const std::string info = cppless::testing::local_cluster::command(cluster().node(i).port(), {"INFO", "clients"});
    auto at = info.find("blocked_clients:");
    if (at != std::string::npos) sum += std::stoi(info.substr(at + 16));
  }
  return sum;
}

long long count_keys(const std::string& pattern) {
  const std::string script = "return #redis.call('KEYS', ARGV[1])";
  if (!on_cluster()) return std::stoll(admin(server(), {"EVAL", script, "0", pattern}));
  long long sum = 0;
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    const int port = cluster().node(i).port();
    if (cppless::testing::local_cluster::command(port, {"INFO", "replication"}).find("role:master") == std::string::npos) continue;
    sum += std::stoll(cppless::testing::local_cluster::command(port, {"EVAL", script, "0", pattern}));
  }
  return sum;
}

void shared_test::SetUp() {
  // Short budgets so failure tests end quickly; real runs keep the defaults. On a cluster a call
  // may wait for a replica's confirmation (WAIT), so give it more.
  process_settings().retry_budget = on_cluster() ? milliseconds(10'000) : milliseconds(1500);
  store_ = store::connect(target_url());
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
