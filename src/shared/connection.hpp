// One connection to Redis (hiredis, blocking), and the per-process pool of them (private).
#pragma once

#include <cppless/shared/address.hpp>
#include <cppless/shared/client.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct redisContext;

namespace cppless::shared::detail {

// The connection broke (or timed out) in the middle of a command: whether the command ran is
// unknown. Internal: callers reconnect and retry, or turn it into a connection_error.
struct io_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A connection attempt failed (refused, unreachable, timed out). Internal, retried within budget.
struct connect_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A reply that means "not now, try again": the server is loading its data (LOADING), running a
// long script (BUSY), migrating or failing over (TRYAGAIN, MASTERDOWN, CLUSTERDOWN). The command
// did not run; it is resent, unchanged, within the retry budget.
bool is_transient(const reply& r);
// Time until the deadline (negative when past; milliseconds::max() for none).
milliseconds time_left(clock::time_point deadline);

struct connection {
  address where;
  std::string password;
  std::string id;  // random, 16 hex digits: the client id recorded by scripts
  std::uint64_t seq = 0;
  redisContext* ctx = nullptr;

  connection(address w, std::string pw);
  ~connection();
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  [[nodiscard]] bool is_open() const noexcept { return ctx != nullptr; }
  // Connects, authenticates and selects the database, giving up at `deadline` (and after the
  // connect timeout). Throws connect_failure (retryable), auth_error (not).
  void open(clock::time_point deadline);
  void close() noexcept;
  // Sends one command and reads its reply, waiting at most read_timeout (zero: without limit).
  // Throws io_failure (and closes) when the connection breaks or the reply does not come in time.
  reply exec(std::span<const std::string_view> argv, milliseconds read_timeout);

  milliseconds socket_timeout{-1};  // what the socket is set to now (set only when it changes)
};

class pool {
 public:
  explicit pool(address where) : where_(std::move(where)) {}
  std::unique_ptr<connection> acquire();
  void release(std::unique_ptr<connection> c);
  [[nodiscard]] const address& where() const noexcept { return where_; }
  // After fork(), in the child: closes the idle connections inherited from the parent (without
  // sending anything on them). Returns false if the pool was busy at fork time.
  bool drop_after_fork() noexcept;

 private:
  address where_;
  std::mutex m_;
  std::vector<std::unique_ptr<connection>> idle_;
};

// The pool of this process for an address (created on first use).
std::shared_ptr<pool> pool_for(const address& where);
// The password this process uses for an address (registry, then environment); "" for none.
std::string password_of(const address& where);
// Gives `to` (a cluster node) the password registered for `from` (the seed), unless it has one.
void share_password(const address& from, const address& to);

// Turns an error reply into the exception of errors.hpp that names its cause. obj/kind may be
// null (plain commands).
[[noreturn]] void raise(const reply& r, const address& where, const object_ref* obj, const kind_info* kind);

}  // namespace cppless::shared::detail
