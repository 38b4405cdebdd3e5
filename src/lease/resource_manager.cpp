#include "resource_manager.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>

namespace cppless::lease {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {
json fail(const std::string& why) { return {{"ok", false}, {"error", why}}; }
}  // namespace

resource_manager::resource_manager(resource_manager_options options)
    : options_(std::move(options)), instance_tag_(random_hex(3)) {
  listener_ = net::listen_on(options_.listen);
  address_ = net::bound_address(listener_.get());
  if (address_.host == "0.0.0.0") address_.host = options_.listen.host.empty() ? "0.0.0.0" : options_.listen.host;
}

resource_manager::~resource_manager() {
  stop();
  connections_.stop();
}

void resource_manager::stop() {
  stopping_ = true;
  if (listener_) ::shutdown(listener_.get(), SHUT_RDWR);
  std::lock_guard lock(mutex_);
  for (auto& [id, m] : managers_)
    if (m.link) ::shutdown(m.link->get(), SHUT_RDWR);
}

void resource_manager::run() {
  std::thread keeper([this] {
    while (!stopping_) {
      housekeeping();
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(options_.heartbeat / 4, 50ms));
    }
  });
  connections_.serve(listener_.get(), stopping_, [this](int c) { serve_connection(c); });
  keeper.join();
}

// Every connection starts with a challenge: the peer proves it knows its secret by the HMAC of
// a fresh nonce (nothing secret crosses the wire, and a recorded answer is useless later).
void resource_manager::serve_connection(int fd) {
  try {
    const std::string nonce = random_hex(16);
    net::send_message(fd, {{"type", "hello"}, {"nonce", nonce}}, net::after(5s));
    json auth = net::receive_message(fd, net::after(10s));
    const std::string role = auth.value("role", "");
    const std::string user = auth.value("user", "");
    const std::string proof = auth.value("proof", "");
    std::string key;
    if (role == "manager") key = options_.keys.cluster_key;
    else if (role == "client") {
      auto it = options_.keys.users.find(user);
      if (it != options_.keys.users.end()) key = it->second;
    }
    if (key.empty() || !same_mac(proof, hmac_sha256_hex(key, nonce + "|" + role + "|" + user))) {
      net::send_message(fd, fail("authentication failed for " + role + " '" + user + "'"), net::after(5s));
      return;
    }
    net::send_message(fd, {{"ok", true}}, net::after(5s));
    if (role == "manager") serve_manager(fd, auth);
    else serve_client(fd, user);
  } catch (const std::exception&) {
    // A peer that went away or spoke nonsense: its connection ends, nothing else changes.
  }
}

void resource_manager::serve_client(int fd, const std::string& user) {
  while (!stopping_) {
    json request;
    try {
      request = net::receive_message(fd, net::after(24h));
    } catch (const net::net_error&) {
      return;
    }
    const std::string type = request.value("type", "");
    json reply;
    try {
      if (type == "lease") reply = grant(user, request);
      else if (type == "release") reply = release(user, request.value("lease", ""), "released");
      else if (type == "status") reply = status(user, request.value("lease", ""));
      else if (type == "managers") {
        std::lock_guard lock(mutex_);
        reply = {{"ok", true}, {"managers", json::array()}};
        for (auto& [id, m] : managers_)
          reply["managers"].push_back({{"id", id}, {"address", m.address.text()}, {"cores", m.cores},
                                       {"memory_mb", m.memory_mb}, {"used_cores", m.used_cores},
                                       {"used_memory_mb", m.used_memory_mb}});
      } else reply = fail("unknown request '" + type + "'");
    } catch (const std::exception& e) {
      reply = fail(std::string("bad request: ") + e.what());
    }
    net::send_message(fd, reply, net::after(10s));
  }
}

void resource_manager::serve_manager(int fd, const json& hello) {
  json reg = net::receive_message(fd, net::after(10s));
  if (reg.value("type", "") != "register") return;
  std::string id;
  {
    std::lock_guard lock(mutex_);
    id = "m" + std::to_string(next_manager_++) + "-" + instance_tag_;
    manager_rec m;
    m.id = id;
    m.address = net::parse_address(reg.at("address").get<std::string>());
    m.cores = reg.at("cores").get<unsigned>();
    m.memory_mb = reg.at("memory_mb").get<unsigned>();
    m.last_beat = std::chrono::steady_clock::now();
    m.link = std::make_shared<net::fd_handle>(::dup(fd));
    m.send_mutex = std::make_shared<std::mutex>();
    std::lock_guard send(*m.send_mutex);
    net::send_message(fd, {{"ok", true}, {"manager", id}, {"heartbeat_ms", options_.heartbeat.count()},
                           {"cluster_hint", hello.value("user", "")}}, net::after(5s));
    managers_.emplace(id, std::move(m));
  }
  std::fprintf(stderr, "cppless resource-manager: executor manager %s registered (%s, %u cores, %u MB)\n", id.c_str(),
               reg.at("address").get<std::string>().c_str(), reg.at("cores").get<unsigned>(),
               reg.at("memory_mb").get<unsigned>());
  try {
    while (!stopping_) {
      json beat = net::receive_message(fd, net::after(options_.heartbeat * (options_.missed_beats + 1)));
      std::lock_guard lock(mutex_);
      auto it = managers_.find(id);
      if (it == managers_.end()) return;  // dropped meanwhile
      it->second.last_beat = std::chrono::steady_clock::now();
      if (auto usage = beat.find("usage"); usage != beat.end() && usage->is_object()) {
        for (auto& [lease_id, figures] : usage->items()) {
          auto l = leases_.find(lease_id);
          if (l == leases_.end()) continue;
          for (auto& p : l->second.parts)
            if (p.manager == id) p.usage = figures;
        }
      }
    }
  } catch (const std::exception& e) {
    drop_manager(id, std::string("connection lost: ") + e.what());
  }
}

json resource_manager::grant(const std::string& user, const json& request) {
  const unsigned cores = request.at("cores").get<unsigned>();
  const unsigned memory_mb = request.at("memory_mb").get<unsigned>();
  const std::int64_t duration_ms = request.at("duration_ms").get<std::int64_t>();
  const std::string mode = request.value("mode", "hot");
  if (cores == 0) return fail("a lease needs at least one core");
  if (duration_ms <= 0 || duration_ms > options_.max_duration.count())
    return fail("lease duration must be between 1 ms and " + std::to_string(options_.max_duration.count()) + " ms");
  if (mode != "hot" && mode != "warm") return fail("mode must be 'hot' or 'warm'");
  std::lock_guard lock(mutex_);
  // Least loaded first: each core goes to the manager with the most free cores that still has
  // the memory for one more executor, so a lease spreads over the cluster and managers fill evenly.
  std::map<std::string, unsigned> take;
  std::map<std::string, std::pair<unsigned, unsigned>> free;  // cores, memory
  for (auto& [id, m] : managers_) free[id] = {m.cores - m.used_cores, m.memory_mb - m.used_memory_mb};
  for (unsigned c = 0; c < cores; ++c) {
    std::string best;
    for (auto& [id, f] : free)
      if (f.first > 0 && f.second >= memory_mb && (best.empty() || f.first > free[best].first)) best = id;
    if (best.empty()) {
      unsigned total = 0;
      for (auto& [id, f] : free) total += f.first;
      return fail("not enough free resources: asked for " + std::to_string(cores) + " cores with " +
                  std::to_string(memory_mb) + " MB each; " + std::to_string(c + total) + " cores free on " +
                  std::to_string(managers_.size()) + " executor managers");
    }
    free[best].first -= 1;
    free[best].second -= memory_mb;
    ++take[best];
  }
  lease_rec l;
  l.id = "L" + std::to_string(next_lease_++) + "-" + instance_tag_;
  l.user = user;
  l.mode = mode;
  l.memory_mb = memory_mb;
  l.expires_ms = unix_ms() + duration_ms;
  for (auto& [id, n] : take) {
    auto& m = managers_.at(id);
    m.used_cores += n;
    m.used_memory_mb += n * memory_mb;
    part p;
    p.manager = id;
    p.cores = n;
    p.token = lease_token{l.id, user, id, l.expires_ms, n, memory_mb, mode, {}};
    p.token.sign(options_.keys.cluster_key);
    l.parts.push_back(std::move(p));
  }
  json reply = describe_lease(l);
  reply["ok"] = true;
  reply["duration_ms"] = duration_ms;
  leases_.emplace(l.id, std::move(l));
  return reply;
}

json resource_manager::describe_lease(const lease_rec& l) const {
  json parts = json::array();
  json total = {{"allocation_ns", 0}, {"compute_ns", 0}, {"hot_poll_ns", 0}, {"calls", 0}, {"executors", 0}};
  for (auto& p : l.parts) {
    auto m = managers_.find(p.manager);
    parts.push_back({{"manager", p.manager}, {"address", m != managers_.end() ? m->second.address.text() : ""},
                     {"cores", p.cores}, {"lost", p.lost}, {"token", p.token.to_json()}, {"usage", p.usage}});
    for (auto& [k, v] : total.items())
      if (p.usage.contains(k)) v = v.get<std::int64_t>() + p.usage[k].get<std::int64_t>();
  }
  return {{"lease", l.id}, {"user", l.user}, {"mode", l.mode}, {"memory_mb", l.memory_mb},
          {"expires_ms", l.expires_ms}, {"remaining_ms", std::max<std::int64_t>(0, l.expires_ms - unix_ms())},
          {"state", l.state}, {"parts", parts}, {"usage", total}};
}

void resource_manager::free_parts(lease_rec& l) {
  for (auto& p : l.parts) {
    auto m = managers_.find(p.manager);
    if (m == managers_.end() || p.lost) continue;
    m->second.used_cores -= std::min(m->second.used_cores, p.cores);
    m->second.used_memory_mb -= std::min(m->second.used_memory_mb, p.cores * l.memory_mb);
  }
}

json resource_manager::release(const std::string& user, const std::string& lease, const std::string& why) {
  std::vector<std::string> tell;
  {
    std::lock_guard lock(mutex_);
    auto it = leases_.find(lease);
    if (it == leases_.end() || it->second.user != user) return fail("no lease '" + lease + "' of user '" + user + "'");
    auto& l = it->second;
    if (l.state == "active") {
      free_parts(l);
      l.state = why;
      for (auto& p : l.parts)
        if (!p.lost) tell.push_back(p.manager);
    }
  }
  for (auto& m : tell) tell_manager(m, {{"type", "revoke"}, {"lease", lease}});
  return {{"ok", true}};
}

json resource_manager::status(const std::string& user, const std::string& lease) {
  std::lock_guard lock(mutex_);
  auto it = leases_.find(lease);
  if (it == leases_.end() || it->second.user != user) return fail("no lease '" + lease + "' of user '" + user + "'");
  json reply = describe_lease(it->second);
  reply["ok"] = true;
  return reply;
}

void resource_manager::tell_manager(const std::string& id, const json& message) {
  std::shared_ptr<net::fd_handle> link;
  std::shared_ptr<std::mutex> send_mutex;
  {
    std::lock_guard lock(mutex_);
    auto m = managers_.find(id);
    if (m == managers_.end()) return;
    link = m->second.link;
    send_mutex = m->second.send_mutex;
  }
  try {
    std::lock_guard send(*send_mutex);
    net::send_message(link->get(), message, net::after(2s));
  } catch (const std::exception&) {
    // Its heartbeats will stop too; housekeeping drops it.
  }
}

void resource_manager::drop_manager(const std::string& id, const std::string& why) {
  std::lock_guard lock(mutex_);
  auto m = managers_.find(id);
  if (m == managers_.end()) return;
  std::fprintf(stderr, "cppless resource-manager: executor manager %s dropped (%s)\n", id.c_str(), why.c_str());
  ::shutdown(m->second.link->get(), SHUT_RDWR);
  for (auto& [lid, l] : leases_) {
    bool any_left = false;
    for (auto& p : l.parts) {
      if (p.manager == id) p.lost = true;
      any_left = any_left || !p.lost;
    }
    if (l.state == "active" && !any_left) l.state = "lost";
  }
  managers_.erase(m);
}

void resource_manager::housekeeping() {
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::string> silent;
  std::vector<std::pair<std::string, std::string>> expired;  // manager, lease
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, m] : managers_)
      if (now - m.last_beat > options_.heartbeat * options_.missed_beats) silent.push_back(id);
    const auto wall = unix_ms();
    for (auto& [id, l] : leases_) {
      if (l.state != "active" || l.expires_ms > wall) continue;
      free_parts(l);
      l.state = "expired";
      for (auto& p : l.parts)
        if (!p.lost) expired.emplace_back(p.manager, id);
    }
  }
  for (auto& id : silent) drop_manager(id, "missed " + std::to_string(options_.missed_beats) + " heartbeats");
  // Managers end expired leases themselves (the token says when); this is a second word on it.
  for (auto& [m, l] : expired) tell_manager(m, {{"type", "revoke"}, {"lease", l}});
}

}  // namespace cppless::lease
