// hiredis connections: connect, authenticate, send (without SIGPIPE), read; and the pools.
#include "connection.hpp"

#include "cluster.hpp"

#include <cppless/shared/errors.hpp>

#include <hiredis/hiredis.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <random>
#include <sys/socket.h>
#include <sys/time.h>
#include <unordered_map>

namespace cppless::shared {

settings& process_settings() {
  static settings s;
  return s;
}

namespace detail {
namespace {

timeval to_timeval(milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

reply convert(const redisReply* r) {
  reply out;
  switch (r->type) {
    case REDIS_REPLY_STRING: out.type = reply::kind::string; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_STATUS: out.type = reply::kind::status; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_ERROR: out.type = reply::kind::error; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_INTEGER: out.type = reply::kind::integer; out.integer = r->integer; break;
    case REDIS_REPLY_ARRAY:
      out.type = reply::kind::array;
      out.elements.reserve(r->elements);
      for (std::size_t i = 0; i < r->elements; ++i) out.elements.push_back(convert(r->element[i]));
      break;
    default: out.type = reply::kind::nil; break;
  }
  return out;
}

std::string random_id() {
  static thread_local std::random_device rd;
  std::uint64_t v = (std::uint64_t{rd()} << 32) ^ rd();
  static constexpr char hex[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = hex[v & 0xF];
  return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Script errors arrive as "<message> script: <sha>, on @user_script:<line>."; keep the message.
std::string strip_script_suffix(std::string msg) {
  if (auto at = msg.rfind(" script: "); at != std::string::npos) msg.resize(at);
  return msg;
}

}  // namespace

bool is_transient(const reply& r) {
  if (r.type != reply::kind::error) return false;
  // "BUSY Redis is busy running a script": with the space, so BUSYKEY/BUSYGROUP are not matched.
  for (std::string_view code : {"LOADING", "BUSY ", "TRYAGAIN", "MASTERDOWN", "CLUSTERDOWN"})
    if (starts_with(r.str, code)) return true;
  return false;
}

milliseconds time_left(clock::time_point deadline) {
  if (deadline == clock::time_point::max()) return milliseconds::max();
  return std::chrono::duration_cast<milliseconds>(deadline - clock::now());
}

// ---------------------------------------------------------------------------------------------
// reply

const std::string& reply::str_at(std::size_t i) const {
  static const std::string empty;
  return i < elements.size() ? elements[i].str : empty;
}
long long reply::int_at(std::size_t i) const {
  if (i >= elements.size()) return 0;
  const reply& e = elements[i];
  if (e.type == kind::integer) return e.integer;
  return std::strtoll(e.str.c_str(), nullptr, 10);
}
bool reply::nil_at(std::size_t i) const { return i >= elements.size() || elements[i].is_nil(); }

// ---------------------------------------------------------------------------------------------
// connection

connection::connection(address w, std::string pw) : where(std::move(w)), password(std::move(pw)), id(random_id()) {}
connection::~connection() { close(); }

void connection::close() noexcept {
  if (ctx != nullptr) {
    redisFree(ctx);
    ctx = nullptr;
  }
}

void connection::open(clock::time_point deadline) {
  close();
  const settings& s = process_settings();
  const milliseconds left = time_left(deadline);
  if (left <= milliseconds(0)) throw connect_failure("no time left in the retry budget");
  ctx = redisConnectWithTimeout(where.host.c_str(), where.port, to_timeval(std::min(s.connect_timeout, left)));
  if (ctx == nullptr || ctx->err != 0) {
    std::string why = ctx != nullptr ? ctx->errstr : "out of memory";
    close();
    throw connect_failure(why);
  }
  socket_timeout = milliseconds(-1);
  redisEnableKeepAlive(ctx);
  int one = 1;
  ::setsockopt(ctx->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // small requests: no Nagle delay
  // AUTH and SELECT: an error reply is final (wrong password, no such database); a lost one is a
  // failed connection attempt, retried like a refused connect.
  auto setup = [&](std::span<const std::string_view> argv) {
    reply r;
    try {
      r = exec(argv, std::max(milliseconds(1), std::min(s.command_timeout, time_left(deadline))));
    } catch (const io_failure& e) {
      throw connect_failure(e.what());
    }
    if (r.type == reply::kind::error) {
      close();
      if (is_transient(r)) throw connect_failure("Redis answered: " + r.str);
      raise(r, where, nullptr, nullptr);
    }
  };
  if (!password.empty()) {
    std::vector<std::string_view> argv{"AUTH"};
    if (!where.user.empty()) argv.emplace_back(where.user);
    argv.emplace_back(password);
    setup(argv);
  }
  if (where.db != 0) {
    std::string db = std::to_string(where.db);
    std::string_view argv[] = {"SELECT", db};
    setup(argv);
  }
}

reply connection::exec(std::span<const std::string_view> argv, milliseconds read_timeout) {
  if (ctx == nullptr) throw io_failure("not connected");
  std::vector<const char*> ptrs(argv.size());
  std::vector<std::size_t> lens(argv.size());
  for (std::size_t i = 0; i < argv.size(); ++i) {
    ptrs[i] = argv[i].data();
    lens[i] = argv[i].size();
  }
  char* cmd = nullptr;
  int len = redisFormatCommandArgv(&cmd, static_cast<int>(argv.size()), ptrs.data(), lens.data());
  if (len < 0) throw std::bad_alloc();
  // Sent by hand with MSG_NOSIGNAL: hiredis uses write(), and a write to a connection the server
  // closed would raise SIGPIPE and kill the process instead of failing the call.
  std::size_t sent = 0;
  std::string failure;
  while (sent < static_cast<std::size_t>(len)) {
    ssize_t n = ::send(ctx->fd, cmd + sent, static_cast<std::size_t>(len) - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      failure = errno == EAGAIN || errno == EWOULDBLOCK ? "send timed out" : std::strerror(errno);
      break;
    }
    sent += static_cast<std::size_t>(n);
  }
  redisFreeCommand(cmd);
  if (!failure.empty()) {
    close();
    throw io_failure(failure);
  }
  if (read_timeout != socket_timeout) {
    redisSetTimeout(ctx, to_timeval(read_timeout));
    socket_timeout = read_timeout;
  }
  void* raw = nullptr;
  int rc = redisGetReply(ctx, &raw);
  if (rc != REDIS_OK || raw == nullptr) {
    int err = errno;
    std::string why = ctx->err == REDIS_ERR_IO && (err == EAGAIN || err == EWOULDBLOCK)
                          ? "no reply within the timeout"
                          : (ctx->err == REDIS_ERR_EOF ? "connection closed by the server" : std::string(ctx->errstr));
    close();
    throw io_failure(why);
  }
  reply out = convert(static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  return out;
}

// ---------------------------------------------------------------------------------------------
// errors

void raise(const reply& r, const address& where, const object_ref* obj, const kind_info* kind) {
  std::string msg = strip_script_suffix(r.str);
  // Redis prefixes "ERR " to script errors whose code stands alone (e.g. "CPPLESS_SET").
  if (starts_with(msg, "ERR CPPLESS_")) msg.erase(0, 4);
  const std::string at = where.to_string();
  const std::string what = obj != nullptr ? obj->describe() : "Redis at " + at;
  auto rest = [&](std::string_view code) {
    std::string s = msg.substr(std::min(msg.size(), code.size()));
    if (!s.empty() && s.front() == ' ') s.erase(0, 1);
    return s;
  };
  if (starts_with(msg, "CPPLESS_TYPE"))
    throw type_mismatch("cppless::shared: " + what + " is a " + rest("CPPLESS_TYPE") + ", but was opened as " +
                        (kind != nullptr ? kind->readable : std::string("something else")));
  if (starts_with(msg, "CPPLESS_MISSING"))
    throw missing_object("cppless::shared: " + what + " does not exist (was its namespace removed?)");
  if (starts_with(msg, "CPPLESS_SET")) throw already_set("cppless::shared: " + what + " is already set; a future is set once");
  if (starts_with(msg, "CPPLESS_PARAM"))
    throw type_mismatch("cppless::shared: " + what + " already exists with other parameters (" + rest("CPPLESS_PARAM") + ")");
  if (starts_with(msg, "CPPLESS_RANGE"))
    throw server_error("cppless::shared: " + what + ": " + rest("CPPLESS_RANGE") + " of the value type; nothing was changed");
  if (starts_with(msg, "CPPLESS_USER"))
    throw operation_error("cppless::shared: " + what + ": the operation raised: " + rest("CPPLESS_USER") +
                          " (the object was left as it was)");
  if (starts_with(msg, "CPPLESS_INDEX"))
    throw index_out_of_range("cppless::shared: " + what + ": " + rest("CPPLESS_INDEX") + "; nothing was changed");
  if (starts_with(msg, "CPPLESS_FOREIGN"))
    throw type_mismatch("cppless::shared: " + what + " holds a Redis hash that cppless did not write");
  if (starts_with(msg, "WRONGTYPE"))
    throw type_mismatch("cppless::shared: " + what + " holds a Redis value that cppless did not write (" + msg + ")");
  if (starts_with(msg, "NOAUTH"))
    throw auth_error("cppless::shared: Redis at " + at +
                     " requires authentication; give the password in CPPLESS_REDIS (redis://:password@host:port) or "
                     "CPPLESS_REDIS_PASSWORD");
  if (starts_with(msg, "WRONGPASS") || (starts_with(msg, "ERR") && msg.find("AUTH") != std::string::npos))
    throw auth_error("cppless::shared: Redis at " + at + " rejected the credentials: " + msg);
  if (starts_with(msg, "NOPERM"))
    throw auth_error("cppless::shared: Redis at " + at + " denied the ACL user " +
                     (where.user.empty() ? std::string("'default'") : "'" + where.user + "'") + " a command: " + msg);
  throw server_error("cppless::shared: " + what + ": Redis answered: " + msg);
}

// ---------------------------------------------------------------------------------------------
// pools

namespace {

struct registry {
  std::mutex m;
  std::unordered_map<std::string, std::shared_ptr<pool>> pools;
  std::unordered_map<std::string, std::string> passwords;
  std::unordered_map<std::string, std::shared_ptr<routing>> routings;
};

void lock_registry();
void unlock_registry();
void reset_registry_in_child();

registry& reg() {
  // Leaked on purpose: handles may be used from static destructors of user code.
  static registry* r = [] {
    auto* fresh = new registry;
    // A forked child must not share the parent's sockets (replies would interleave) nor its
    // client ids (call ids would collide): it starts with no connections.
    pthread_atfork(lock_registry, unlock_registry, reset_registry_in_child);
    return fresh;
  }();
  return *r;
}

void lock_registry() { reg().m.lock(); }
void unlock_registry() { reg().m.unlock(); }
void reset_registry_in_child() {
  registry& r = reg();
  for (auto& [key, p] : r.pools) {
    if (!p->drop_after_fork()) new std::shared_ptr<pool>(p);  // busy at fork time: leak, never touch
  }
  r.pools.clear();
  // A routing may have been locked by another thread at fork time: leak them, start afresh.
  for (auto& [key, route] : r.routings) new std::shared_ptr<routing>(route);
  r.routings.clear();
  r.m.unlock();
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

std::string password_for(const address& where) {
  {
    registry& r = reg();
    std::lock_guard lock(r.m);
    if (auto it = r.passwords.find(where.cache_key()); it != r.passwords.end()) return it->second;
  }
  if (std::string pw = env("CPPLESS_REDIS_PASSWORD"); !pw.empty()) return pw;
  if (std::string url = env("CPPLESS_REDIS"); !url.empty()) {
    try {
      endpoint ep = parse_url(url);
      if (ep.where.host == where.host && ep.where.port == where.port && ep.where.user == where.user) return ep.password;
    } catch (const error&) {
      // A malformed CPPLESS_REDIS is reported by store::from_env; here it just holds no password.
    }
  }
  return {};
}

}  // namespace

std::string password_of(const address& where) { return password_for(where); }

void share_password(const address& from, const address& to) {
  registry& r = reg();
  std::lock_guard lock(r.m);
  auto it = r.passwords.find(from.cache_key());
  if (it != r.passwords.end() && r.passwords.find(to.cache_key()) == r.passwords.end())
    r.passwords.emplace(to.cache_key(), it->second);
}

std::shared_ptr<routing> routing_for(const address& seed) {
  registry& r = reg();
  std::lock_guard lock(r.m);
  auto& route = r.routings[seed.cache_key()];
  if (!route) route = std::make_shared<routing>(seed);
  return route;
}

std::unique_ptr<connection> pool::acquire() {
  {
    std::lock_guard lock(m_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  return std::make_unique<connection>(where_, password_for(where_));
}

void pool::release(std::unique_ptr<connection> c) {
  if (!c || !c->is_open()) return;
  std::lock_guard lock(m_);
  if (idle_.size() < 32) idle_.push_back(std::move(c));
}

bool pool::drop_after_fork() noexcept {
  if (!m_.try_lock()) return false;
  idle_.clear();  // redisFree closes the inherited fd; nothing is sent on it
  m_.unlock();
  return true;
}

std::shared_ptr<pool> pool_for(const address& where) {
  registry& r = reg();
  std::string key = where.cache_key();
  std::lock_guard lock(r.m);
  auto& p = r.pools[key];
  if (!p) p = std::make_shared<pool>(where);
  return p;
}

}  // namespace detail

void register_password(const address& where, std::string password) { detail::swap_password(where, std::move(password)); }

namespace detail {

std::optional<std::string> swap_password(const address& where, std::optional<std::string> password) {
  registry& r = reg();
  std::lock_guard lock(r.m);
  std::optional<std::string> before;
  if (auto it = r.passwords.find(where.cache_key()); it != r.passwords.end()) {
    before = std::move(it->second);
    r.passwords.erase(it);
  }
  if (password) r.passwords[where.cache_key()] = std::move(*password);
  // Connections opened before (without or with another password) must not be reused.
  if (auto it = r.pools.find(where.cache_key()); it != r.pools.end()) r.pools.erase(it);
  return before;
}

}  // namespace detail

}  // namespace cppless::shared
