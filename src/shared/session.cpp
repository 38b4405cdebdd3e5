// Sessions: the retry policy (what is resent, and for how long: the retry budget bounds a whole
// call) and script calls (EVALSHA, falling back to EVAL when the server does not know the script).
#include "cluster.hpp"
#include "connection.hpp"
#include "scripts.hpp"

#include <cppless/shared/errors.hpp>

#include <algorithm>
#include <cstdio>
#include <thread>

namespace cppless::shared::detail {
namespace {

// The end of a call's retry budget, from now. The budget bounds the whole call: connection
// attempts, sends, waits for replies and pauses between attempts.
clock::time_point budget_deadline() {
  const milliseconds budget = process_settings().retry_budget;
  if (budget <= milliseconds(0) || budget >= record_ttl)
    throw invalid_argument("cppless::shared: settings::retry_budget must be positive and below " +
                           std::to_string(record_ttl.count()) + " ms, how long call records are kept (got " +
                           std::to_string(budget.count()) + " ms)");
  return clock::now() + budget;
}

// Reconnects c, retrying with exponential backoff until `deadline`. `lost` is why the connection
// was lost ("" when it never was: first connection).
void reconnect(connection& c, clock::time_point deadline, const std::string& lost) {
  const auto since = clock::now();
  auto delay = milliseconds(1);
  for (;;) {
    try {
      c.open(deadline);
      return;
    } catch (const connect_failure& e) {
      auto spent = std::chrono::duration_cast<milliseconds>(clock::now() - since);
      if (clock::now() + delay >= deadline) {
        std::string head = lost.empty() ? "cannot connect to Redis at " + c.where.to_string()
                                        : "lost the connection to Redis at " + c.where.to_string() + " (" + lost +
                                              ") and could not reconnect";
        throw connection_error("cppless::shared: " + head + ": " + e.what() + " (retried for " +
                               std::to_string(spent.count()) + " ms)");
      }
      std::this_thread::sleep_for(delay);
      delay = std::min(delay * 2, milliseconds(100));
    }
  }
}

}  // namespace

std::string object_ref::describe() const { return "'" + name + "' in namespace '" + ns + "' at " + addr.to_string(); }

session::session(const object_ref& obj) { open(obj.addr, obj.key(), false); }
session::session(const address& where) { open(where, {}, false); }
session::session(const address& node, pinned_t) { open(node, {}, true); }

void session::open(const address& where, std::string_view route_key, bool pinned) {
  seed_ = where;
  if (!pinned) {
    auto route = routing_for(where);
    if (route->is_cluster(budget_deadline())) routing_ = std::move(route);
  }
  address node = where;
  if (routing_) {
    // The map is read again every few seconds, so replicas (and moved slots) added since are known.
    routing_->refresh_if_older(milliseconds(5'000), budget_deadline());
    if (!route_key.empty()) {
      slot_ = key_slot(route_key);
      has_slot_ = true;
      if (auto owner = routing_->node_for(slot_)) node = *owner;
    } else if (auto masters = routing_->masters(); !masters.empty()) {
      node = masters.front();
    }
  }
  pool_ = pool_for(node);
  conn_ = pool_->acquire();
}

session::~session() { pool_->release(std::move(conn_)); }

const std::string& session::client_id() const { return conn_->id; }
std::uint64_t& session::next_sequence() { return conn_->seq; }

void session::bind(const address& node) {
  if (node == pool_->where()) return;
  auto next_pool = pool_for(node);
  auto next = next_pool->acquire();
  // The session keeps its client identity: calls already numbered (a resend after MOVED) and
  // waiter registrations stay valid. Identities are swapped, never copied, so none is shared.
  std::swap(next->id, conn_->id);
  std::swap(next->seq, conn_->seq);
  pool_->release(std::move(conn_));
  pool_ = std::move(next_pool);
  conn_ = std::move(next);
}

void session::follow_slot(clock::time_point deadline) {
  if (!routing_) return;
  routing_->refresh(deadline);
  std::optional<address> owner = has_slot_ ? routing_->node_for(slot_) : std::nullopt;
  if (!owner) {
    auto masters = routing_->masters();
    if (!masters.empty()) owner = masters.front();
  }
  if (owner) bind(*owner);
}

std::vector<address> session::nodes_of(const address& where) {
  auto route = routing_for(where);
  if (!route->is_cluster(budget_deadline())) return {where};
  return route->masters();
}

// Sends one command until it gets a reply that is not transient, or the deadline passes. Errors
// are classified by what they say about the command:
//   - a transient reply (LOADING, BUSY, ...): not run; resent after a pause;
//   - a lost connection or reply: unknown; resent at once over a new connection (a changing call
//     carries its call id, so the server applies it once whatever happened before);
//   - a redirect (cluster: MOVED, ASK): not run here; resent at once to the node named;
//   - any other reply, errors included: final, returned to the caller.
// In cluster mode a failure also re-reads the slot map, so a failover is followed.
reply session::call(std::span<const std::string_view> argv, clock::time_point deadline, bool changes) {
  const auto start = clock::now();
  const milliseconds command_timeout = process_settings().command_timeout;
  auto delay = milliseconds(1);
  bool maybe_applied = false;  // some attempt was sent and its reply lost
  bool ever_connected = conn_->is_open();
  bool asking = false;         // an ASK redirect: precede the next attempt with ASKING
  int redirects = 0;
  std::string last;
  for (;;) {
    bool pause = false;
    connection& c = *conn_;
    if (!c.is_open()) {
      try {
        c.open(deadline);
        ever_connected = true;
      } catch (const connect_failure& e) {
        last = e.what();
        pause = true;
      }
    }
    if (c.is_open()) {
      const milliseconds left = time_left(deadline);
      if (left > milliseconds(0)) {
        try {
          if (asking) {
            const std::string_view ask[] = {"ASKING"};
            c.exec(ask, std::min(command_timeout, left));
            asking = false;
          }
          reply r = c.exec(argv, std::min(command_timeout, time_left(deadline)));
          std::optional<redirect> to = routing_ ? parse_redirect(r) : std::nullopt;
          if (to) {
            if (++redirects > 16)
              throw server_error("cppless::shared: Redis Cluster at " + seed_.to_string() + " redirected one call 16 times (last: " +
                                 r.str + ")");
            const address node = routing_->node_address(to->host, to->port);
            if (to->ask) {
              asking = true;
            } else {
              routing_->moved(to->slot, node);
            }
            bind(node);
            continue;
          }
          if (!is_transient(r)) return r;
          last = "Redis answered: " + r.str;
          pause = true;
        } catch (const io_failure& e) {
          maybe_applied = maybe_applied || changes;
          last = e.what();
        }
      }
    }
    const auto now = clock::now();
    if (now >= deadline || (pause && now + delay >= deadline)) {
      const std::string spent = std::to_string(std::chrono::duration_cast<milliseconds>(now - start).count());
      const std::string at = seed_.to_string();
      if (maybe_applied)
        throw outcome_unknown("cppless::shared: Redis at " + at + " did not confirm a call within the retry budget (" + spent +
                              " ms; last: " + last + "); whether it took effect is unknown");
      if (!ever_connected)
        throw connection_error("cppless::shared: cannot connect to Redis at " + at + ": " + last + " (retried for " + spent + " ms)");
      throw connection_error("cppless::shared: Redis at " + at + " did not answer within the retry budget (" + spent +
                             " ms; last: " + last + ")");
    }
    if (pause) {
      std::this_thread::sleep_for(delay);
      delay = std::min(delay * 2, milliseconds(100));
    }
    if (routing_ && (pause || !conn_->is_open())) follow_slot(deadline);
  }
}

reply session::raw(std::span<const std::string_view> argv) { return call(argv, budget_deadline(), false); }

reply session::command(std::initializer_list<std::string_view> argv) {
  reply r = raw(std::span(argv.begin(), argv.size()));
  if (r.type == reply::kind::error) raise(r, where(), nullptr, nullptr);
  return r;
}

reply session::eval(detail::script s, std::span<const std::string_view> keys_and_args, bool changes) {
  const script_source& src = source_of(s);
  std::vector<std::string_view> argv;
  argv.reserve(2 + keys_and_args.size());
  argv.insert(argv.end(), {"EVALSHA", src.sha});
  argv.insert(argv.end(), keys_and_args.begin(), keys_and_args.end());
  return confirmed(argv, budget_deadline(), changes, src.body);
}

reply session::fcall(std::string_view function, std::span<const std::string_view> keys_and_args, bool changes) {
  std::vector<std::string_view> argv;
  argv.reserve(2 + keys_and_args.size());
  argv.insert(argv.end(), {"FCALL", function});
  argv.insert(argv.end(), keys_and_args.begin(), keys_and_args.end());
  return confirmed(argv, budget_deadline(), changes, {});
}

reply session::confirmed(std::vector<std::string_view>& argv, clock::time_point deadline, bool changes, std::string_view body) {
  for (;;) {
    reply r = call(argv, deadline, changes);
    // The server does not know the script (first use, or it restarted): send its body once.
    if (!body.empty() && r.type == reply::kind::error && r.str.starts_with("NOSCRIPT")) {
      argv[0] = "EVAL";
      argv[1] = body;
      r = call(argv, deadline, changes);
    }
    // On a cluster with replicas, a change is confirmed only once a replica has it too, so a
    // failover (the replica promoted) cannot lose an acknowledged change. If the master fails
    // before the replica confirms, the call is sent again with the same record: applied once.
    if (!changes || !routing_ || r.type == reply::kind::error || routing_->replicas_of(pool_->where()) == 0) return r;
    const milliseconds left = time_left(deadline);
    if (left <= milliseconds(0)) return r;
    const std::string wait_ms = std::to_string(std::min(left, milliseconds(1000)).count());
    const std::string_view wait[] = {"WAIT", "1", wait_ms};
    try {
      conn_->exec(wait, std::min(process_settings().command_timeout, left + milliseconds(100)));
      return r;  // confirmed by a replica, or none answered within a second: acknowledged anyway
    } catch (const io_failure&) {
      follow_slot(deadline);
    }
  }
}

reply session::script(const object_ref& obj, detail::script s, const kind_info& kind, bool mutating,
                      std::initializer_list<std::string_view> args) {
  const std::string key = obj.key();
  // The call id is fixed before the first attempt: every resend of this call carries the same one.
  std::string seq;
  std::string cid;
  if (mutating) {
    seq = std::to_string(++conn_->seq);
    cid = conn_->id;
  }
  std::vector<std::string_view> argv;
  argv.reserve(5 + args.size());
  argv.insert(argv.end(), {"1", key, kind.kind, cid, seq});
  argv.insert(argv.end(), args.begin(), args.end());
  reply r = eval(s, argv, mutating);
  if (r.type == reply::kind::error) raise(r, where(), &obj, &kind);
  return r;
}

std::optional<reply> session::blocking(std::initializer_list<std::string_view> argv, clock::time_point deadline) {
  if (!conn_->is_open()) reconnect(*conn_, budget_deadline(), "");
  std::vector<std::string_view> full(argv.begin(), argv.end());
  char seconds[32] = "0";  // 0: block without limit
  milliseconds read_timeout{0};
  if (deadline != clock::time_point::max()) {
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - clock::now());
    left = std::max(left, std::chrono::microseconds(1000));  // 0 would mean "forever" to Redis
    std::snprintf(seconds, sizeof seconds, "%.3f", static_cast<double>(left.count()) / 1e6);
    // The server answers at its timeout; the socket waits the retry budget longer for that answer.
    read_timeout = std::chrono::duration_cast<milliseconds>(left) + process_settings().retry_budget;
  }
  full.emplace_back(seconds);
  try {
    reply r = conn_->exec(full, read_timeout);
    if (std::optional<redirect> to = routing_ ? parse_redirect(r) : std::nullopt) {
      // The object moved (resharding, failover): follow it; the caller looks again.
      const address node = routing_->node_address(to->host, to->port);
      if (!to->ask) routing_->moved(to->slot, node);
      bind(node);
      return std::nullopt;
    }
    if (is_transient(r)) {
      // Not blocked at all (the server is loading, or busy): pause, and let the caller look again.
      std::this_thread::sleep_for(std::min(milliseconds(50), std::max(milliseconds(1), time_left(deadline))));
      if (routing_) follow_slot(budget_deadline());
      return std::nullopt;
    }
    if (r.type == reply::kind::error) raise(r, where(), nullptr, nullptr);
    return r;
  } catch (const io_failure& e) {
    if (routing_) {
      // The next call reconnects (to the slot's master after a failover) within its own budget.
      follow_slot(budget_deadline());
      return std::nullopt;
    }
    reconnect(*conn_, budget_deadline(), e.what());
    return std::nullopt;
  }
}

void open_object(const object_ref& obj, const kind_info& kind,
                 std::initializer_list<std::pair<std::string_view, std::string_view>> params,
                 std::initializer_list<std::pair<std::string_view, std::string_view>> init) {
  check_name(obj.ns, "namespace");
  check_name(obj.name, "object name");
  const std::string key = obj.key();
  const std::string count = std::to_string(params.size());
  std::vector<std::string_view> argv{"1", key, kind.kind, kind.readable, count};
  for (const auto& [f, v] : params) argv.insert(argv.end(), {f, v});
  for (const auto& [f, v] : init) argv.insert(argv.end(), {f, v});
  session ses(obj);
  // Creating is idempotent (create if absent), so it is simply resent after a lost reply.
  reply r = ses.eval(script::open, argv, false);
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
    if (what == "namespace" && (c == '{' || c == '}'))
      bad("contains a brace, which would break the hash tag that keeps an object's keys in one cluster slot");
  }
}

}  // namespace cppless::shared::detail
