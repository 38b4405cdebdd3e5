// Sessions: the retry policy (reconnect and resend within the retry budget) and script calls
// (EVALSHA, falling back to EVAL when the server does not know the script).
#include "connection.hpp"
#include "scripts.hpp"

#include <cppless/shared/errors.hpp>

#include <algorithm>
#include <cstdio>
#include <thread>

namespace cppless::shared::detail {
namespace {

// Reconnects c, retrying with exponential backoff until the retry budget (counted from `since`)
// is spent. `lost` is why the connection was lost ("" when it never was: first connection).
void reconnect(connection& c, clock::time_point since, const std::string& lost) {
  const auto budget = process_settings().retry_budget;
  auto delay = std::chrono::milliseconds(1);
  for (;;) {
    try {
      c.open();
      return;
    } catch (const connect_failure& e) {
      auto spent = std::chrono::duration_cast<milliseconds>(clock::now() - since);
      if (spent + delay > budget) {
        std::string head = lost.empty() ? "cannot connect to Redis at " + c.where.to_string()
                                        : "lost the connection to Redis at " + c.where.to_string() + " (" + lost +
                                              ") and could not reconnect";
        throw connection_error("cppless::shared: " + head + ": " + e.what() + " (retried for " +
                               std::to_string(spent.count()) + " ms)");
      }
      std::this_thread::sleep_for(delay);
      delay = std::min(delay * 2, std::chrono::milliseconds(100));
    }
  }
}

// How many times one call is resent over fresh connections before giving up, even within the
// time budget (a server that drops every connection must not make a call spin forever).
constexpr int max_resends = 8;

}  // namespace

std::string object_ref::describe() const { return "'" + name + "' in namespace '" + ns + "' at " + addr.to_string(); }

session::session(const address& where) : pool_(pool_for(where)), conn_(pool_->acquire()) {}

session::~session() { pool_->release(std::move(conn_)); }

const std::string& session::client_id() const { return conn_->id; }
const address& session::where() const { return pool_->where(); }

namespace {

reply exec_retrying(connection& c, std::span<const std::string_view> argv) {
  if (!c.is_open()) reconnect(c, clock::now(), "");
  int resends = 0;
  clock::time_point first_loss{};
  for (;;) {
    try {
      return c.exec(argv);
    } catch (const io_failure& e) {
      if (first_loss == clock::time_point{}) first_loss = clock::now();
      if (++resends > max_resends)
        throw connection_error("cppless::shared: the connection to Redis at " + c.where.to_string() + " broke " +
                               std::to_string(resends) + " times during one call (last: " + e.what() + ")");
      reconnect(c, first_loss, e.what());
    }
  }
}

}  // namespace

reply session::raw(std::span<const std::string_view> argv) { return exec_retrying(*conn_, argv); }

reply session::command(std::initializer_list<std::string_view> argv) {
  reply r = exec_retrying(*conn_, std::span(argv.begin(), argv.size()));
  if (r.type == reply::kind::error) raise(r, where(), nullptr, nullptr);
  return r;
}

reply session::script(const object_ref& obj, detail::script s, const kind_info& kind, bool mutating,
                      std::initializer_list<std::string_view> args) {
  const script_source& src = source_of(s);
  const std::string key = obj.key();
  // The call id is fixed before the first attempt: every resend of this call carries the same one.
  std::string seq;
  std::string_view cid;
  if (mutating) {
    seq = std::to_string(++conn_->seq);
    cid = conn_->id;
  }
  std::vector<std::string_view> argv;
  argv.reserve(8 + args.size());
  argv.insert(argv.end(), {"EVALSHA", src.sha, "1", key, kind.kind, cid, seq});
  argv.insert(argv.end(), args.begin(), args.end());
  reply r = exec_retrying(*conn_, argv);
  if (r.type == reply::kind::error && r.str.starts_with("NOSCRIPT")) {
    argv[0] = "EVAL";
    argv[1] = src.body;
    r = exec_retrying(*conn_, argv);
  }
  if (r.type == reply::kind::error) raise(r, where(), &obj, &kind);
  return r;
}

std::optional<reply> session::blocking(std::initializer_list<std::string_view> argv, clock::time_point deadline) {
  if (!conn_->is_open()) reconnect(*conn_, clock::now(), "");
  std::vector<std::string_view> full(argv.begin(), argv.end());
  char seconds[32] = "0";  // 0: block without limit
  std::optional<milliseconds> read_timeout = milliseconds(0);
  if (deadline != clock::time_point::max()) {
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - clock::now());
    left = std::max(left, std::chrono::microseconds(1000));  // 0 would mean "forever" to Redis
    std::snprintf(seconds, sizeof seconds, "%.3f", static_cast<double>(left.count()) / 1e6);
    // The server answers at its timeout; the socket waits a little longer for that answer.
    read_timeout = std::chrono::duration_cast<milliseconds>(left) + process_settings().command_timeout;
  }
  full.emplace_back(seconds);
  try {
    reply r = conn_->exec(full, read_timeout);
    if (r.type == reply::kind::error) raise(r, where(), nullptr, nullptr);
    return r;
  } catch (const io_failure& e) {
    reconnect(*conn_, clock::now(), e.what());
    return std::nullopt;
  }
}

void open_object(const object_ref& obj, const kind_info& kind,
                 std::initializer_list<std::pair<std::string_view, std::string_view>> params,
                 std::initializer_list<std::pair<std::string_view, std::string_view>> init) {
  check_name(obj.ns, "namespace");
  check_name(obj.name, "object name");
  const script_source& src = source_of(script::open);
  const std::string key = obj.key();
  const std::string count = std::to_string(params.size());
  std::vector<std::string_view> argv{"EVALSHA", src.sha, "1", key, kind.kind, kind.readable, count};
  for (const auto& [f, v] : params) argv.insert(argv.end(), {f, v});
  for (const auto& [f, v] : init) argv.insert(argv.end(), {f, v});
  session ses(obj.addr);
  // Creating is idempotent (create if absent), so it is simply resent after a lost reply.
  reply r = ses.raw(argv);
  if (r.type == reply::kind::error && r.str.starts_with("NOSCRIPT")) {
    argv[0] = "EVAL";
    argv[1] = src.body;
    r = ses.raw(argv);
  }
  if (r.type == reply::kind::error) raise(r, obj.addr, &obj, &kind);
}

clock::time_point deadline_after(milliseconds timeout) {
  if (timeout == no_timeout) return clock::time_point::max();
  auto now = clock::now();
  if (timeout > std::chrono::duration_cast<milliseconds>(clock::time_point::max() - now)) return clock::time_point::max();
  return now + std::max(timeout, milliseconds(0));
}

void check_name(std::string_view name, std::string_view what) {
  auto bad = [&](const std::string& why) {
    std::string shown;
    for (char c : name.substr(0, 64)) shown += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
    throw invalid_argument("cppless::shared: bad " + std::string(what) + " '" + shown + "': " + why);
  };
  if (name.empty()) bad("empty");
  if (name.size() > 1024) bad("longer than 1024 bytes");
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) bad("contains a control character");
    if (what == "namespace" && (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\'))
      bad("contains a glob character (* ? [ ] \\), which would make namespace removal match other keys");
  }
}

}  // namespace cppless::shared::detail
