#include "lease_commands.hpp"

#include "executor_manager.hpp"
#include "resource_manager.hpp"
#include "rm_client.hpp"

#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <pthread.h>
#include <sstream>
#include <thread>

namespace cppless::tools {

namespace {

// SIGINT/SIGTERM stop the server cleanly (executors killed, sockets closed): the signals are
// blocked in every thread and taken by one that calls stop().
template <class Server>
int serve_until_signalled(Server& server) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&set, &sig);
    server.stop();
  });
  waiter.detach();
  server.run();
  return 0;
}

template <class F>
void guarded(F&& f) {
  try {
    std::exit(f());
  } catch (const std::exception& e) {
    std::cerr << "cppless: " << e.what() << "\n";
    std::exit(1);
  }
}

std::vector<int> parse_cpus(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const auto dash = item.find('-');
    if (dash == std::string::npos) cpus.push_back(std::stoi(item));
    else
      for (int c = std::stoi(item.substr(0, dash)); c <= std::stoi(item.substr(dash + 1)); ++c) cpus.push_back(c);
  }
  return cpus;
}
}  // namespace

void add_lease_commands(CLI::App& app) {
  struct rm_args {
    std::string listen = "127.0.0.1:7700", secrets;
    long heartbeat_ms = 1000;
    unsigned missed = 3;
  };
  auto rm = std::make_shared<rm_args>();
  auto* rm_cmd = app.add_subcommand("resource-manager", "Grant leases on executor managers (lease backend)");
  rm_cmd->add_option("--listen", rm->listen, "Address to listen on (host:port; port 0 picks one)");
  rm_cmd->add_option("--secrets", rm->secrets, "File of 'NAME SECRET' lines: users, and '@managers' (cluster key)")->required();
  rm_cmd->add_option("--heartbeat-ms", rm->heartbeat_ms, "Heartbeat period asked of executor managers");
  rm_cmd->add_option("--missed-beats", rm->missed, "Heartbeats missed before a manager is dropped");
  rm_cmd->callback([rm] {
    guarded([&] {
      lease::resource_manager_options o;
      o.listen = lease::net::parse_address(rm->listen);
      o.keys = lease::secrets::load(rm->secrets);
      o.heartbeat = std::chrono::milliseconds(rm->heartbeat_ms);
      o.missed_beats = rm->missed;
      lease::resource_manager server(std::move(o));
      std::printf("cppless resource-manager listening on %s\n", server.address().text().c_str());
      std::fflush(stdout);
      return serve_until_signalled(server);
    });
  });

  struct em_args {
    std::string rm, listen = "127.0.0.1:0", advertise, cpus, cache, enforcement = "auto", cgroup, secret_file;
    unsigned cores = 1, memory = 1024;
    long hot_poll_us = 2'000'000;
  };
  auto em = std::make_shared<em_args>();
  auto* em_cmd = app.add_subcommand("executor-manager", "Lend this node's cores to leases (lease backend)");
  em_cmd->add_option("--resource-manager", em->rm, "tcp://host:port of the resource manager")->required();
  em_cmd->add_option("--cores", em->cores, "Executors this node runs at once");
  em_cmd->add_option("--memory", em->memory, "Memory (MB) this node lends in all");
  em_cmd->add_option("--listen", em->listen, "Address clients connect to (host:port; port 0 picks one)");
  em_cmd->add_option("--advertise", em->advertise, "Address given to clients, if not the listening one");
  em_cmd->add_option("--cpus", em->cpus, "CPUs executors are pinned to, e.g. 2-5,8 (default: the first --cores)");
  em_cmd->add_option("--cache-dir", em->cache, "Where shipped executables are kept (by SHA-256)");
  em_cmd->add_option("--memory-enforcement", em->enforcement, "auto | cgroup | rlimit | none");
  em_cmd->add_option("--cgroup", em->cgroup, "A cgroup v2 directory delegated to this manager");
  em_cmd->add_option("--hot-poll-us", em->hot_poll_us, "How long idle hot executors busy-poll before blocking");
  em_cmd->add_option("--secret-file", em->secret_file, "File holding the cluster key (default: CPPLESS_MANAGER_SECRET[_FILE])");
  em_cmd->callback([em] {
    guarded([&] {
      lease::executor_manager_options o;
      o.resource_manager = lease::net::parse_address(em->rm);
      o.listen = lease::net::parse_address(em->listen);
      o.advertise = em->advertise;
      o.cores = em->cores;
      o.memory_mb = em->memory;
      o.cpus = parse_cpus(em->cpus);
      o.cache_dir = em->cache;
      o.cgroup_dir = em->cgroup;
      o.hot_poll = std::chrono::microseconds(em->hot_poll_us);
      if (em->enforcement == "auto") o.memory = lease::memory_enforcement::automatic;
      else if (em->enforcement == "cgroup") o.memory = lease::memory_enforcement::cgroup;
      else if (em->enforcement == "rlimit") o.memory = lease::memory_enforcement::rlimit;
      else if (em->enforcement == "none") o.memory = lease::memory_enforcement::none;
      else throw std::runtime_error("--memory-enforcement must be auto, cgroup, rlimit or none");
      if (!em->secret_file.empty()) ::setenv("CPPLESS_MANAGER_SECRET_FILE", em->secret_file.c_str(), 1);
      o.cluster_key = lease::secret_from_env("CPPLESS_MANAGER_SECRET");
      lease::executor_manager server(std::move(o));
      std::printf("cppless executor-manager listening on %s\n", server.address().text().c_str());
      std::fflush(stdout);
      return serve_until_signalled(server);
    });
  });

  struct status_args {
    std::string rm, lease;
  };
  auto st = std::make_shared<status_args>();
  auto* st_cmd = app.add_subcommand("lease-status", "Show one lease (state, parts, usage) or the executor managers, as JSON");
  st_cmd->add_option("lease", st->lease, "Lease id (default: list the executor managers)");
  st_cmd->add_option("--resource-manager", st->rm, "tcp://host:port (default: CPPLESS_RESOURCE_MANAGER)");
  st_cmd->callback([st] {
    guarded([&] {
      const char* env_rm = std::getenv("CPPLESS_RESOURCE_MANAGER");
      const std::string rm = !st->rm.empty() ? st->rm : env_rm ? env_rm : "";
      if (rm.empty()) throw std::runtime_error("no resource manager (--resource-manager or CPPLESS_RESOURCE_MANAGER)");
      const char* env_user = std::getenv("CPPLESS_USER");
      const char* login = std::getenv("USER");
      const std::string user = env_user && *env_user ? env_user : login ? login : "";
      const std::string secret = lease::secret_from_env("CPPLESS_SECRET");
      if (user.empty() || secret.empty()) throw std::runtime_error("set CPPLESS_USER and CPPLESS_SECRET (or CPPLESS_SECRET_FILE)");
      nlohmann::json request = st->lease.empty() ? nlohmann::json{{"type", "managers"}}
                                                 : nlohmann::json{{"type", "status"}, {"lease", st->lease}};
      nlohmann::json reply = lease::ask_as_user(lease::net::parse_address(rm), user, secret, request, std::chrono::seconds(5));
      reply.erase("ok");
      if (auto parts = reply.find("parts"); parts != reply.end())
        for (auto& p : *parts) p.erase("token");  // a status is for reading, not for reusing
      std::cout << reply.dump(2) << "\n";
      return 0;
    });
  });
}

}  // namespace cppless::tools
