// Starting a private Redis Cluster: nodes, then `redis-cli --cluster create`, then waiting for
// cluster_state:ok everywhere.
#include <cppless/error.hpp>
#include <cppless/testing/local_cluster.hpp>

#include <hiredis/hiredis.h>

#include <csignal>
#include <optional>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace cppless::testing {
namespace {

struct reply_text {
  std::string text;
  std::vector<reply_text> elements;
  long long integer = 0;
};

reply_text convert(const redisReply* r) {
  reply_text out;
  if (r->type == REDIS_REPLY_ARRAY) {
    for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
  } else if (r->type == REDIS_REPLY_INTEGER) {
    out.integer = r->integer;
    out.text = std::to_string(r->integer);
  } else if (r->str != nullptr) {
    out.text.assign(r->str, r->len);
  }
  return out;
}

std::optional<reply_text> ask(int port, const std::vector<std::string>& argv) {
  timeval tv{2, 0};
  redisContext* ctx = redisConnectWithTimeout("127.0.0.1", port, tv);
  if (ctx == nullptr || ctx->err != 0) {
    if (ctx != nullptr) redisFree(ctx);
    return std::nullopt;
  }
  redisSetTimeout(ctx, tv);
  std::vector<const char*> p;
  std::vector<size_t> l;
  for (const auto& a : argv) {
    p.push_back(a.data());
    l.push_back(a.size());
  }
  auto* r = static_cast<redisReply*>(redisCommandArgv(ctx, static_cast<int>(argv.size()), p.data(), l.data()));
  std::optional<reply_text> out;
  if (r != nullptr) {
    out = convert(r);
    freeReplyObject(r);
  }
  redisFree(ctx);
  return out;
}

// Runs a program to its end (killed after `limit`); its output goes to `log`. Returns the exit code.
int run_program(const std::vector<std::string>& args, const std::string& log, std::chrono::seconds limit) {
  std::vector<char*> argv;
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw cppless::error("cppless::testing::local_cluster: fork failed");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  const auto give_up = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > give_up) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

local_cluster::local_cluster(options opts) : opts_(opts) {
  if (opts_.masters < 1 || opts_.replicas < 0 || (opts_.masters < 3 && opts_.replicas > 0))
    throw cppless::error("cppless::testing::local_cluster: needs 1 master without replicas, or 3 or more masters");
  const int total = opts_.masters * (1 + opts_.replicas);
  for (int i = 0; i < total; ++i) {
    local_redis::options node;
    // Replicas sync at once (the default waits 5 s before a diskless sync, long enough for a
    // replica to give up), and may always take over from a dead master.
    node.extra_args = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout",
                       std::to_string(opts_.node_timeout_ms), "--repl-diskless-sync-delay", "0",
                       "--cluster-replica-validity-factor", "0"};
    nodes_.push_back(std::make_unique<local_redis>(node));
  }
  if (opts_.masters == 1) {
    // redis-cli --cluster create wants 3 masters; one node simply takes every slot.
    auto r = ask(nodes_[0]->port(), {"CLUSTER", "ADDSLOTSRANGE", "0", "16383"});
    if (!r || r->text != "OK") throw cppless::error("cppless::testing::local_cluster: CLUSTER ADDSLOTSRANGE failed");
  } else {
    std::vector<std::string> args = {"redis-cli", "--cluster", "create"};
    for (auto& n : nodes_) args.push_back("127.0.0.1:" + std::to_string(n->port()));
    args.insert(args.end(), {"--cluster-replicas", std::to_string(opts_.replicas), "--cluster-yes"});
    const std::string log = nodes_[0]->dir() + "/cluster-create.log";
    if (run_program(args, log, std::chrono::seconds(60)) != 0)
      throw cppless::error("cppless::testing::local_cluster: redis-cli --cluster create failed: " + read_file(log));
  }
  wait_for(true, std::chrono::seconds(30));
}

local_cluster::~local_cluster() = default;

std::string local_cluster::url() const { return "redis://127.0.0.1:" + std::to_string(nodes_.front()->port()); }

std::string local_cluster::command(int port, const std::vector<std::string>& argv) {
  auto r = ask(port, argv);
  return r ? r->text : std::string();
}

void local_cluster::wait_until_ok(std::chrono::milliseconds limit) { wait_for(false, limit); }

void local_cluster::wait_for(bool replicas_attached, std::chrono::milliseconds limit) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  for (;;) {
    bool ok = true;
    int masters_with_replicas = 0;
    for (auto& n : nodes_) {
      if (n->pid() <= 0) continue;  // killed by the test
      auto info = ask(n->port(), {"CLUSTER", "INFO"});
      if (!info || info->text.find("cluster_state:ok") == std::string::npos) ok = false;
      if (replicas_attached) {
        // Every node must also list every master's replicas (clients learn them from any node).
        auto slots = ask(n->port(), {"CLUSTER", "SLOTS"});
        if (!slots || slots->elements.empty()) ok = false;
        if (slots)
          for (const auto& range : slots->elements)
            if (range.elements.size() < 3 + static_cast<std::size_t>(opts_.replicas)) ok = false;
      }
      auto repl = ask(n->port(), {"INFO", "replication"});
      if (repl && repl->text.find("role:master") != std::string::npos &&
          repl->text.find("connected_slaves:" + std::to_string(opts_.replicas)) != std::string::npos)
        ++masters_with_replicas;
    }
    // Right after creation every master must also have its replicas attached (WAIT needs them).
    if (ok && (!replicas_attached || opts_.replicas == 0 || masters_with_replicas >= opts_.masters)) return;
    if (std::chrono::steady_clock::now() > give_up)
      throw cppless::error("cppless::testing::local_cluster: the cluster did not reach cluster_state:ok");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

local_redis& local_cluster::master_for(std::string_view key) {
  for (auto& n : nodes_) {
    if (n->pid() <= 0) continue;
    auto slot = ask(n->port(), {"CLUSTER", "KEYSLOT", std::string(key)});
    auto slots = ask(n->port(), {"CLUSTER", "SLOTS"});
    if (!slot || !slots) continue;
    for (const auto& range : slots->elements) {
      if (range.elements.size() < 3) continue;
      if (slot->integer < range.elements[0].integer || slot->integer > range.elements[1].integer) continue;
      const long long port = range.elements[2].elements.size() > 1 ? range.elements[2].elements[1].integer : 0;
      for (auto& m : nodes_)
        if (m->port() == port) return *m;
    }
  }
  throw cppless::error("cppless::testing::local_cluster: no live node knows the master of '" + std::string(key) + "'");
}

}  // namespace cppless::testing
