#include "executor_manager.hpp"

#include "rm_client.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>

namespace cppless::lease {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {
json fail(const std::string& why) { return {{"ok", false}, {"error", why}}; }

bool is_hex_hash(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// A cgroup v2 directory this process may create children in, with the memory controller.
std::string probe_cgroup(const std::string& wanted) {
  std::string base = wanted;
  if (base.empty()) {
    struct statfs fs{};
    if (::statfs("/sys/fs/cgroup", &fs) != 0 || fs.f_type != CGROUP2_SUPER_MAGIC) return {};
    base = "/sys/fs/cgroup/cppless-em-" + std::to_string(::getpid());
    if (::mkdir(base.c_str(), 0755) != 0) return {};
  }
  write_file(base + "/cgroup.subtree_control", "+memory");
  const std::string probe = base + "/probe";
  if (::mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST) return {};
  const bool ok = ::access((probe + "/memory.max").c_str(), W_OK) == 0;
  ::rmdir(probe.c_str());
  return ok ? base : std::string();
}
}  // namespace

executor_manager::executor_manager(executor_manager_options options) : options_(std::move(options)) {
  if (options_.cluster_key.empty()) throw std::runtime_error("no cluster key (set CPPLESS_MANAGER_SECRET or CPPLESS_MANAGER_SECRET_FILE)");
  if (options_.cores == 0) throw std::runtime_error("--cores must be at least 1");
  if (options_.cpus.empty()) {
    auto all = allowed_cpus();
    for (unsigned i = 0; i < options_.cores; ++i) options_.cpus.push_back(all[i % all.size()]);
  }
  cpu_load_.assign(options_.cpus.size(), 0);
  if (options_.cache_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    options_.cache_dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/cppless-executors-" + std::to_string(::getuid());
  }
  ::mkdir(options_.cache_dir.c_str(), 0700);
  struct stat st{};
  if (::stat(options_.cache_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 022))
    throw std::runtime_error("cache directory " + options_.cache_dir + " is missing, not ours, or writable by others");

  if (options_.memory == memory_enforcement::automatic || options_.memory == memory_enforcement::cgroup) {
    std::string dir = probe_cgroup(options_.cgroup_dir);
    if (!dir.empty()) {
      options_.cgroup_dir = dir;
      options_.memory = memory_enforcement::cgroup;
    } else if (options_.memory == memory_enforcement::cgroup) {
      throw std::runtime_error("no writable cgroup v2 directory with the memory controller");
    } else {
      options_.memory = memory_enforcement::rlimit;
    }
  }

  cores_fd_ = ::memfd_create("cppless-core-table", MFD_CLOEXEC);
  if (cores_fd_ < 0 || ::ftruncate(cores_fd_, sizeof(core_table)) != 0) throw std::runtime_error("memfd_create failed");
  void* table = ::mmap(nullptr, sizeof(core_table), PROT_READ | PROT_WRITE, MAP_SHARED, cores_fd_, 0);
  if (table == MAP_FAILED) throw std::runtime_error("mmap of the core table failed");
  cores_ = static_cast<core_table*>(table);

  spawner_ = std::thread([this] { spawner_loop(); });
  listener_ = net::listen_on(options_.listen);
  address_ = net::bound_address(listener_.get());
  if (options_.advertise.empty()) options_.advertise = address_.text();
  connect_resource_manager();
}

executor_manager::~executor_manager() {
  stop();
  connections_.stop();
  if (spawner_.joinable()) spawner_.join();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  std::lock_guard lock(mutex_);
  for (auto& [id, l] : leases_)
    for (auto& e : l.executors) {
      if (e.running) {
        ::kill(e.pid, SIGKILL);
        ::waitpid(e.pid, nullptr, 0);
      }
      if (e.counters) ::munmap(e.counters, sizeof(executor_counters));
      if (!e.cgroup.empty()) ::rmdir(e.cgroup.c_str());
    }
  if (cores_) ::munmap(cores_, sizeof(core_table));
  if (cores_fd_ >= 0) ::close(cores_fd_);
}

void executor_manager::stop() {
  stopping_ = true;
  if (listener_) ::shutdown(listener_.get(), SHUT_RDWR);
  std::lock_guard lock(spawn_mutex_);
  spawn_cv_.notify_all();
}

void executor_manager::spawner_loop() {
  std::unique_lock lock(spawn_mutex_);
  while (!stopping_ || !spawn_queue_.empty()) {
    if (spawn_queue_.empty()) {
      spawn_cv_.wait(lock);
      continue;
    }
    auto work = std::move(spawn_queue_.front());
    spawn_queue_.pop_front();
    lock.unlock();
    work();
    lock.lock();
  }
}

void executor_manager::on_spawner(std::function<void()> work) {
  std::packaged_task<void()> task(std::move(work));
  auto done = task.get_future();
  {
    std::lock_guard lock(spawn_mutex_);
    if (stopping_) throw std::runtime_error("the executor manager is stopping");
    spawn_queue_.emplace_back([&task] { task(); });
  }
  spawn_cv_.notify_one();
  done.get();
}

void executor_manager::connect_resource_manager() {
  net::fd_handle fd = net::connect_to(options_.resource_manager, 5s);
  try {
    authenticate(fd.get(), "manager", net::hostname(), options_.cluster_key, net::after(5s));
  } catch (const refused& e) {
    throw std::runtime_error(std::string("resource manager refused us: ") + e.what());
  }
  net::send_message(fd.get(),
                    {{"type", "register"}, {"address", options_.advertise}, {"cores", options_.cores},
                     {"memory_mb", options_.memory_mb}},
                    net::after(5s));
  json reg = net::receive_message(fd.get(), net::after(5s));
  if (!reg.value("ok", false)) throw std::runtime_error("registration refused: " + reg.value("error", "?"));
  std::lock_guard lock(mutex_);
  ids_.insert(reg.at("manager").get<std::string>());
  heartbeat_ = std::chrono::milliseconds(reg.value("heartbeat_ms", 1000));
  rm_link_ = std::move(fd);
  std::fprintf(stderr, "cppless executor-manager: registered as %s with %s (%u cores, %u MB, memory by %s)\n",
               reg.at("manager").get<std::string>().c_str(), options_.resource_manager.text().c_str(), options_.cores,
               options_.memory_mb,
               options_.memory == memory_enforcement::cgroup ? "cgroup" :
               options_.memory == memory_enforcement::rlimit ? "rlimit" : "nothing");
}

void executor_manager::run() {
  threads_.emplace_back([this] { resource_manager_loop(); });
  threads_.emplace_back([this] {
    while (!stopping_) {
      reap();
      std::this_thread::sleep_for(10ms);
    }
  });
  connections_.serve(listener_.get(), stopping_, [this](int c) { serve_client(c); });
}

// Heartbeats with the usage of every lease; revocations come back on the same connection. A lost
// resource manager is reconnected to; executors and their clients are not disturbed meanwhile.
void executor_manager::resource_manager_loop() {
  auto next_beat = std::chrono::steady_clock::now();
  while (!stopping_) {
    try {
      if (!rm_link_) {
        std::this_thread::sleep_for(500ms);
        connect_resource_manager();
      }
      const auto now = std::chrono::steady_clock::now();
      if (now >= next_beat) {
        json usage;
        {
          std::lock_guard lock(mutex_);
          usage = usage_locked();
        }
        net::send_message(rm_link_.get(), {{"type", "heartbeat"}, {"usage", usage}}, net::after(2s));
        next_beat = now + heartbeat_;
      }
      pollfd p{rm_link_.get(), POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) {
        json msg = net::receive_message(rm_link_.get(), net::after(2s));
        if (msg.value("type", "") == "revoke") end_lease(msg.value("lease", ""), "revoked by the resource manager");
      }
    } catch (const std::exception& e) {
      if (rm_link_) std::fprintf(stderr, "cppless executor-manager: resource manager link lost (%s); reconnecting\n", e.what());
      rm_link_.reset();
    }
  }
}

json executor_manager::usage_locked() const {
  json all = json::object();
  const auto now = std::chrono::steady_clock::now();
  for (auto& [id, l] : leases_) {
    std::int64_t alloc = 0, compute = 0, hot = 0, calls = 0, rejected = 0, running = 0;
    for (auto& e : l.executors) {
      if (!e.counters) continue;  // reserved, or never started
      alloc += std::chrono::duration_cast<std::chrono::nanoseconds>((e.running ? now : e.ended) - e.started).count();
      compute += static_cast<std::int64_t>(e.counters->compute_ns.load());
      hot += static_cast<std::int64_t>(e.counters->hot_poll_ns.load());
      calls += static_cast<std::int64_t>(e.counters->calls.load());
      rejected += static_cast<std::int64_t>(e.counters->rejected.load());
      running += e.running;
    }
    all[id] = {{"allocation_ns", alloc}, {"compute_ns", compute}, {"hot_poll_ns", hot}, {"calls", calls},
               {"rejected", rejected}, {"executors", static_cast<std::int64_t>(l.executors.size())}, {"running", running}};
  }
  return all;
}

void executor_manager::serve_client(int fd) {
  try {
    json request = net::receive_message(fd, net::after(10s));
    if (request.value("type", "") == "usage") {
      // Read-only: the usage of one lease, for a client holding a token of it.
      lease_token token = lease_token::from_json(request.at("token"));
      std::lock_guard lock(mutex_);
      std::string why = ids_.count(token.manager) ? token.problem(options_.cluster_key, token.manager, 0) : "foreign token";
      if (why.find("expired") != std::string::npos) why.clear();  // usage stays readable after the end
      json all = usage_locked();
      net::send_message(fd, why.empty() ? json{{"ok", true}, {"usage", all.value(token.lease, json::object())}} : fail(why),
                        net::after(5s));
      return;
    }
    if (request.value("type", "") != "executor") {
      net::send_message(fd, fail("unknown request"), net::after(5s));
      return;
    }
    lease_token token;
    try {
      token = lease_token::from_json(request.at("token"));
    } catch (const std::exception& e) {
      net::send_message(fd, fail(std::string("malformed token: ") + e.what()), net::after(5s));
      return;
    }
    const std::string hash = request.at("executable").at("sha256").get<std::string>();
    const std::uint64_t size = request.at("executable").at("size").get<std::uint64_t>();
    unsigned index = 0;
    {
      // The token is checked before a single byte of the executable is accepted.
      std::lock_guard lock(mutex_);
      std::string why = "token is for executor manager '" + token.manager + "', not this one";
      for (auto& id : ids_)
        if (id == token.manager) why = token.problem(options_.cluster_key, id, unix_ms());
      if (why.empty() && !is_hex_hash(hash)) why = "executable hash is not a SHA-256 hex digest";
      if (why.empty() && size > options_.max_executable) why = "executable larger than this manager accepts";
      auto& l = leases_[token.lease];
      if (l.token.lease.empty()) l.token = token;
      if (why.empty() && l.ended) why = "lease " + token.lease + " has ended";
      const auto taken = std::count_if(l.executors.begin(), l.executors.end(), [](const executor& e) { return e.pid != 0; });
      if (why.empty() && taken >= static_cast<std::ptrdiff_t>(token.cores))
        why = "lease " + token.lease + " already runs " + std::to_string(taken) + " executors here (its token allows " +
              std::to_string(token.cores) + ")";
      if (!why.empty()) {
        if (l.executors.empty() && !l.ended) leases_.erase(token.lease);
        std::fprintf(stderr, "cppless executor-manager: refused a client: %s\n", why.c_str());
        net::send_message(fd, fail(why), net::after(5s));
        return;
      }
      index = static_cast<unsigned>(l.executors.size());
      l.executors.push_back(executor{});  // reserved; filled in below
      l.executors.back().running = false;
      l.executors.back().started = l.executors.back().ended = std::chrono::steady_clock::now();
      l.executors.back().counters = nullptr;
    }
    auto unreserve = [&] {
      std::lock_guard lock(mutex_);
      auto& l = leases_[token.lease];
      if (index < l.executors.size() && l.executors[index].pid < 0) l.executors[index].pid = 0;  // never ran: frees its slot
    };
    bool cached = false;
    std::string path;
    try {
      path = ensure_executable(fd, hash, size, cached);
    } catch (const std::exception& e) {
      unreserve();
      try {
        net::send_message(fd, fail(e.what()), net::after(5s));
      } catch (...) {
      }
      return;
    }
    executor started;
    {
      std::lock_guard lock(mutex_);
      auto& l = leases_[token.lease];
      if (l.ended) {
        l.executors[index].pid = 0;
        net::send_message(fd, fail("lease " + token.lease + " has ended"), net::after(5s));
        return;
      }
      const lease_rec snapshot{l.token, l.ended, {}};
      on_spawner([&] { started = spawn(fd, snapshot, path, index); });
      l.executors[index] = started;
    }
    net::send_message(fd,
                      {{"ok", true}, {"pid", started.pid}, {"cpu", started.cpu}, {"cached", cached},
                       {"manager", token.manager}, {"host", net::hostname()}},
                      net::after(5s));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cppless executor-manager: client connection failed: %s\n", e.what());
  }
}

// The executable of `hash`: from the cache (its hash checked once per run), or read from the
// client (`size` bytes) into the cache, checked, and only then made executable.
std::string executor_manager::ensure_executable(int fd, const std::string& hash, std::uint64_t size, bool& cached) {
  const std::string path = options_.cache_dir + "/" + hash;
  {
    std::lock_guard lock(mutex_);
    if (verified_.count(hash)) {
      cached = true;
      net::send_message(fd, {{"ok", true}, {"need_executable", false}}, net::after(5s));
      return path;
    }
  }
  if (::access(path.c_str(), X_OK) == 0 && sha256_hex_of_file(path) == hash) {
    std::lock_guard lock(mutex_);
    verified_.insert(hash);
    cached = true;
    net::send_message(fd, {{"ok", true}, {"need_executable", false}}, net::after(5s));
    return path;
  }
  net::send_message(fd, {{"ok", true}, {"need_executable", true}}, net::after(5s));
  const std::string part = options_.cache_dir + "/." + hash + "." + random_hex(4) + ".part";
  {
    net::fd_handle out(::open(part.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0700));
    if (!out) throw std::runtime_error("cannot write " + part + ": " + std::strerror(errno));
    std::vector<char> chunk(1 << 16);
    std::uint64_t left = size;
    try {
      while (left > 0) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
        net::read_all(fd, chunk.data(), n, net::after(30s));
        if (::write(out.get(), chunk.data(), n) != static_cast<ssize_t>(n)) throw std::runtime_error("short write to the cache");
        left -= n;
      }
    } catch (...) {
      ::unlink(part.c_str());
      throw;
    }
  }
  if (sha256_hex_of_file(part) != hash) {
    ::unlink(part.c_str());
    throw std::runtime_error("executable does not match its SHA-256 (" + hash + ")");
  }
  if (::rename(part.c_str(), path.c_str()) != 0) {
    ::unlink(part.c_str());
    throw std::runtime_error("cannot store the executable in " + options_.cache_dir);
  }
  std::lock_guard lock(mutex_);
  verified_.insert(hash);
  return path;
}

executor_manager::executor executor_manager::spawn(int socket_fd, const lease_rec& lease, const std::string& path,
                                                   unsigned index) {
  executor e;
  e.core_index = 0;
  for (unsigned i = 1; i < cpu_load_.size(); ++i)
    if (cpu_load_[i] < cpu_load_[e.core_index]) e.core_index = i;
  e.cpu = options_.cpus[e.core_index];
  int stats_fd = ::memfd_create("cppless-executor-counters", MFD_CLOEXEC);
  if (stats_fd < 0 || ::ftruncate(stats_fd, sizeof(executor_counters)) != 0) throw std::runtime_error("memfd_create failed");
  void* page = ::mmap(nullptr, sizeof(executor_counters), PROT_READ | PROT_WRITE, MAP_SHARED, stats_fd, 0);
  if (page == MAP_FAILED) {
    ::close(stats_fd);
    throw std::runtime_error("mmap failed");
  }
  e.counters = new (page) executor_counters();

  const bool hot = lease.token.mode == "hot";
  const std::uint64_t memory = std::uint64_t{lease.token.memory_mb} << 20;
  if (options_.memory == memory_enforcement::cgroup) {
    e.cgroup = options_.cgroup_dir + "/" + lease.token.lease + "-" + std::to_string(index);
    ::mkdir(e.cgroup.c_str(), 0755);
    write_file(e.cgroup + "/memory.max", std::to_string(memory));
    write_file(e.cgroup + "/memory.swap.max", "0");
  }
  // Everything the child needs is prepared here: between fork and exec only system calls.
  const std::string setting = std::string(executor_variable) + "=3:4:5:" + std::to_string(e.core_index) + ":" +
                              std::to_string(hot ? options_.hot_poll.count() : 0) + ":" + (hot ? "hot" : "warm");
  const std::string procs = e.cgroup.empty() ? std::string() : e.cgroup + "/cgroup.procs";
  const char* path_env = std::getenv("PATH");
  const std::string path_setting = std::string("PATH=") + (path_env ? path_env : "/usr/bin:/bin");
  const std::string lease_setting = "CPPLESS_LEASE_ID=" + lease.token.lease;
  std::vector<std::string> settings{setting, path_setting, lease_setting};
  // Sanitizer settings of a test build follow the executable; nothing else of ours leaks through.
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"})
    if (const char* v = std::getenv(name)) settings.push_back(std::string(name) + "=" + v);
  std::vector<const char*> envp;
  for (auto& s : settings) envp.push_back(s.c_str());
  envp.push_back(nullptr);
  const char* argv[] = {"cppless-executor", nullptr};
  const int cpu = e.cpu;
  const bool limit_as = options_.memory == memory_enforcement::rlimit;
  const pid_t manager = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // executors do not outlive their manager
    if (::getppid() != manager) ::_exit(0);
    const int s = ::fcntl(socket_fd, F_DUPFD, 100), st = ::fcntl(stats_fd, F_DUPFD, 100), ct = ::fcntl(cores_fd_, F_DUPFD, 100);
    if (s < 0 || st < 0 || ct < 0 || ::dup2(s, 3) < 0 || ::dup2(st, 4) < 0 || ::dup2(ct, 5) < 0) ::_exit(126);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ::sched_setaffinity(0, sizeof set, &set);
    if (!procs.empty()) {
      const int f = ::open(procs.c_str(), O_WRONLY);
      if (f < 0 || ::write(f, "0", 1) != 1) ::_exit(125);
      ::close(f);
    }
    if (limit_as) {
      rlimit r{memory, memory};
      ::setrlimit(RLIMIT_AS, &r);
    }
    ::execve(path.c_str(), const_cast<char* const*>(argv), const_cast<char* const*>(envp.data()));
    ::_exit(127);
  }
  ::close(stats_fd);
  e.watch_fd = ::fcntl(socket_fd, F_DUPFD_CLOEXEC, 3);
  e.pid = pid;
  e.running = true;
  e.started = std::chrono::steady_clock::now();
  ++cpu_load_[e.core_index];
  return e;
}

void executor_manager::end_lease(const std::string& id, const char* why) {
  std::lock_guard lock(mutex_);
  auto it = leases_.find(id);
  if (it == leases_.end()) {
    // Revoked before any client came: remember, so a late client is refused.
    if (!id.empty()) leases_[id].ended = true;
    return;
  }
  if (it->second.ended) return;
  it->second.ended = true;
  unsigned killed = 0;
  for (auto& e : it->second.executors)
    if (e.running && e.pid > 0) {
      ::kill(e.pid, SIGKILL);
      ++killed;
    }
  if (killed) std::fprintf(stderr, "cppless executor-manager: lease %s %s: %u executors stopped\n", id.c_str(), why, killed);
}

void executor_manager::reap() {
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;
    std::lock_guard lock(mutex_);
    for (auto& [id, l] : leases_)
      for (auto& e : l.executors)
        if (e.pid == pid && e.running) {
          e.running = false;
          e.ended = std::chrono::steady_clock::now();
          --cpu_load_[e.core_index];
          // An executor killed on a call leaves its core's flag (its pid) set: clear it for the others.
          std::uint32_t holder = static_cast<std::uint32_t>(pid);
          cores_->busy[e.core_index].compare_exchange_strong(holder, 0);
          if (!e.cgroup.empty()) ::rmdir(e.cgroup.c_str());
          if (e.watch_fd >= 0) ::close(e.watch_fd);
          e.watch_fd = -1;
        }
  }
  // A client that went away (killed, crashed, or done) hangs up its connections: its executors
  // are stopped even if they are inside a long function and would not notice for a while.
  {
    std::lock_guard lock(mutex_);
    std::vector<pollfd> fds;
    std::vector<executor*> owners;
    for (auto& [id, l] : leases_)
      for (auto& e : l.executors)
        if (e.running && e.watch_fd >= 0) {
          fds.push_back({e.watch_fd, POLLRDHUP, 0});
          owners.push_back(&e);
        }
    if (!fds.empty() && ::poll(fds.data(), fds.size(), 0) > 0)
      for (std::size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
          ::kill(owners[i]->pid, SIGKILL);
          ::close(owners[i]->watch_fd);
          owners[i]->watch_fd = -1;
        }
  }
  std::vector<std::string> expired;
  {
    std::lock_guard lock(mutex_);
    const auto now = unix_ms();
    for (auto& [id, l] : leases_)
      if (!l.ended && l.token.expires_ms != 0 && l.token.expires_ms <= now) expired.push_back(id);
  }
  for (auto& id : expired) end_lease(id, "expired");
}

}  // namespace cppless::lease
