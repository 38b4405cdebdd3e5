// cppless/shared/client.hpp — how a handle talks to Redis (internal; used by the object headers).
//
// A process keeps one connection pool per Redis address, so a handle deserialized in a worker
// connects on first use and later handles to the same server reuse the connections. A session
// holds one pooled connection for a sequence of calls. Every compound operation is one Lua script
// run with EVALSHA (EVAL when the server does not have it yet): one round trip. A call that
// changes state carries a call id (the connection's random client id and a per-connection
// sequence number); the script records the last applied id per client and answers a retry of that
// id with the recorded result, so a call retried after a lost reply is applied exactly once.
#pragma once

#include <cppless/shared/address.hpp>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cppless::shared {

using milliseconds = std::chrono::milliseconds;
// Pass as a timeout to wait without limit.
inline constexpr milliseconds no_timeout = milliseconds::max();
// The timeout of blocking operations when none is given: long enough for real work, short enough
// that a forgotten party does not hang a run forever.
inline constexpr milliseconds default_wait{60'000};

// Process-wide connection behaviour; set before the first call (not synchronised).
struct settings {
  milliseconds connect_timeout{2'000};   // per connection attempt (within the retry budget)
  milliseconds command_timeout{10'000};  // per reply of a non-blocking call (within the retry budget)
  // How long one non-blocking call may take in all, resends and reconnections included: a call
  // that cannot complete within it ends in connection_error (or outcome_unknown). A blocking call
  // waits its own timeout, and this budget for each reconnection. Must be positive.
  milliseconds retry_budget{2'000};
};
settings& process_settings();

// Registers the password of a server for this process (store::connect does it); handles that
// arrive in this process and name the same address use it.
void register_password(const address& where, std::string password);

namespace detail {

using clock = std::chrono::steady_clock;

// Sets (or, with nullopt, removes) the password registered for an address; returns the one it
// replaces. store::connect puts back the previous one when the server rejects a new one.
std::optional<std::string> swap_password(const address& where, std::optional<std::string> password);

struct reply {
  enum class kind : std::uint8_t { nil, integer, string, array, status, error };
  kind type = kind::nil;
  long long integer = 0;
  std::string str;  // string, status or error text
  std::vector<reply> elements;

  [[nodiscard]] bool is_nil() const noexcept { return type == kind::nil; }
  // Element i of an array reply as a string ("" if absent or nil); as an integer.
  [[nodiscard]] const std::string& str_at(std::size_t i) const;
  [[nodiscard]] long long int_at(std::size_t i) const;
  [[nodiscard]] bool nil_at(std::size_t i) const;
};

// Every server-side operation; the Lua source of each is in src/shared/scripts.cpp.
enum class script : std::uint8_t {
  open,
  counter_add, counter_get, counter_set,
  atomic_load, atomic_store, atomic_exchange, atomic_cas,
  best_offer, best_get,
  barrier_arrive, barrier_withdraw, barrier_check,
  latch_count_down, latch_register, latch_withdraw, latch_get,
  sem_acquire, sem_withdraw, sem_release, sem_get,
  future_set, future_get, future_register, future_withdraw,
  map_get, map_put, map_erase, map_merge, map_size,
  queue_push, queue_pop, queue_size,
  map_entries, map_scan,
  list_push, list_pop, list_get, list_set, list_range, list_size,
  bytes_get, bytes_set, bytes_add, bytes_cas, bytes_all,
  count_
};

// What a handle is, as stored with the object (kind + type tags) and as shown in messages.
struct kind_info {
  std::string kind;      // compared by every script, e.g. "atomic|1f0c...": never a misread
  std::string readable;  // e.g. "atomic<std::string>"
};

// The identity of one named object: the server, the run's namespace and the name. Small, copyable
// and serializable: this is what a handle carries into a function.
struct object_ref {
  address addr;
  std::string ns;
  std::string name;

  // "{ns:name}": braces make it a Redis Cluster hash tag, and every auxiliary key starts with it,
  // so an object's keys share one slot (namespaces may not contain braces).
  [[nodiscard]] std::string key() const { return "{" + ns + ":" + name + "}"; }
  // The key of one of the object's auxiliary Redis values (separated by \x1f, which names may not
  // contain, so no object's key can collide with another's auxiliary keys).
  [[nodiscard]] std::string sub_key(std::string_view suffix) const { return key() + '\x1f' + std::string(suffix); }
  // "'name' in namespace 'ns' at host:port", for messages.
  [[nodiscard]] std::string describe() const;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(addr, ns, name);
  }
};

// What every handle is: the identity of its object (address, namespace, name), so handles are
// small values that copy, capture and serialize; the object types add their operations.
class handle {
 public:
  [[nodiscard]] const std::string& name() const noexcept { return ref_.name; }
  [[nodiscard]] const object_ref& ref() const noexcept { return ref_; }

  template <class Archive>
  void serialize(Archive& ar) {
    ar(ref_);
  }

 protected:
  handle() = default;
  explicit handle(object_ref ref) : ref_(std::move(ref)) {}
  object_ref ref_;
};

class pool;
class routing;
struct connection;

// One pooled connection, held for a sequence of calls (returned to the pool on destruction). On a
// Redis Cluster it is a connection to the master that serves the object's slot, followed to
// another master on MOVED/ASK or after a failover (keeping its client id and sequence numbers).
class session {
 public:
  // For calls on one object (routed by its key's slot on a cluster).
  explicit session(const object_ref& obj);
  // For calls that name no object (PING): any node.
  explicit session(const address& where);
  // For calls on one node's own keys (SCAN, UNLINK), never redirected.
  struct pinned_t {};
  session(const address& node, pinned_t);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  // Runs a script on the object. `mutating` calls carry a call id and are applied once even if
  // retried after a lost reply. Maps the script's errors to the exceptions of errors.hpp.
  reply script(const object_ref& obj, detail::script s, const kind_info& kind, bool mutating,
               std::initializer_list<std::string_view> args);
  // Runs a script given its numkeys, keys and arguments (EVALSHA, or EVAL when the server does
  // not know it yet); error replies are returned. `changes`: the call changes state (only for
  // the message when its outcome stays unknown).
  reply eval(detail::script s, std::span<const std::string_view> keys_and_args, bool changes);
  // Runs a Redis Function (FCALL name numkeys keys... args...), like eval.
  reply fcall(std::string_view function, std::span<const std::string_view> keys_and_args, bool changes);
  // Runs a blocking command (BLPOP, BLMOVE); the server-side timeout (seconds, from the deadline)
  // is appended as the last argument. nullopt: the connection was lost while blocked and has been
  // re-established — the caller must find out what happened before blocking again.
  std::optional<reply> blocking(std::initializer_list<std::string_view> argv, clock::time_point deadline);
  // A plain command, resent over reconnection (for idempotent commands only); error replies
  // become exceptions. raw() returns them instead.
  reply command(std::initializer_list<std::string_view> argv);
  reply raw(std::span<const std::string_view> argv);
  // This connection's client id, as recorded by scripts (stable across reconnections).
  [[nodiscard]] const std::string& client_id() const;
  // The client's sequence counter: a changing call takes the next number.
  std::uint64_t& next_sequence();
  // The address the session was opened for (the seed of a cluster).
  [[nodiscard]] const address& where() const noexcept { return seed_; }
  // The masters of the cluster the address belongs to, or the address itself.
  static std::vector<address> nodes_of(const address& where);

 private:
  void open(const address& where, std::string_view route_key, bool pinned);
  // Moves the session to `node` (cluster): another pooled connection, same client identity.
  void bind(const address& node);
  // After a failure in cluster mode: re-reads the slot map and follows the slot to its master.
  void follow_slot(clock::time_point deadline);
  reply call(std::span<const std::string_view> argv, clock::time_point deadline, bool changes);
  // call(), then (cluster, changing call, master with replicas) WAIT for a replica; `body`: the
  // script's source, sent with EVAL when the server answers NOSCRIPT.
  reply confirmed(std::vector<std::string_view>& argv, clock::time_point deadline, bool changes, std::string_view body);

  address seed_;
  std::shared_ptr<routing> routing_;  // set in cluster mode
  std::uint16_t slot_ = 0;
  bool has_slot_ = false;
  std::shared_ptr<pool> pool_;
  std::unique_ptr<connection> conn_;
};

// A one-call session: the common case.
inline reply run(const object_ref& obj, script s, const kind_info& kind, bool mutating,
                 std::initializer_list<std::string_view> args) {
  session ses(obj);
  return ses.script(obj, s, kind, mutating, args);
}

// Creates the object if the name is free; otherwise checks that it is of the same kind and has the
// same parameters. `params` are (field, value) pairs that must match; `init` pairs are written
// only on creation. Throws type_mismatch.
void open_object(const object_ref& obj, const kind_info& kind,
                 std::initializer_list<std::pair<std::string_view, std::string_view>> params,
                 std::initializer_list<std::pair<std::string_view, std::string_view>> init = {});

// The deadline `timeout` from now (no_timeout: none).
clock::time_point deadline_after(milliseconds timeout);
// Checks a name or namespace; throws invalid_argument.
void check_name(std::string_view name, std::string_view what);

}  // namespace detail
}  // namespace cppless::shared
