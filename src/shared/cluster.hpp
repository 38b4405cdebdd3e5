// Redis Cluster routing (private): which node serves a key, learnt from CLUSTER SLOTS and
// corrected by MOVED redirects. One routing table per address that handles name (the "seed").
#pragma once

#include <cppless/shared/address.hpp>
#include <cppless/shared/client.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cppless::shared::detail {

inline constexpr std::uint16_t cluster_slots = 16384;

// CRC16 (XMODEM) of the key's hash tag (the part between the first '{' and the next '}', when not
// empty) or of the whole key, modulo 16384: the slot Redis Cluster assigns the key to.
std::uint16_t key_slot(std::string_view key);

// A parsed "MOVED <slot> <host>:<port>" or "ASK <slot> <host>:<port>" error reply.
struct redirect {
  bool ask = false;
  std::uint16_t slot = 0;
  std::string host;
  int port = 0;
};
std::optional<redirect> parse_redirect(const reply& r);

// How an address is served: one server, or a cluster (then the slot map).
class routing {
 public:
  explicit routing(address seed) : seed_(std::move(seed)) {}

  // Finds out (once) whether the seed is a cluster node: CLUSTER SLOTS, which a standalone server
  // refuses. Throws connection_error/auth_error like any call, and server_error for a cluster
  // node that serves no slots (not a member of a cluster yet).
  bool is_cluster(clock::time_point deadline);
  // The master serving `slot` (cluster mode only); nullopt when no node serves it.
  std::optional<address> node_for(std::uint16_t slot);
  // How many replicas the master at `node` had at the last refresh.
  int replicas_of(const address& node);
  // Every master (cluster mode), for operations on all keys (namespace removal).
  std::vector<address> masters();
  // A MOVED redirect: the slot is served by `to` now; a full refresh follows at the next miss.
  void moved(std::uint16_t slot, const address& to);
  // Reads CLUSTER SLOTS again (from the seed or any known node), at most every 50 ms unless
  // `force`. Failures are quiet: the old map stays.
  void refresh(clock::time_point deadline, bool force = false);
  // Refreshes when the map is older than `age` (replicas added since are then known).
  void refresh_if_older(milliseconds age, clock::time_point deadline);

  [[nodiscard]] const address& seed() const noexcept { return seed_; }
  // The address of a node named by the cluster: the seed's, with that host and port (db 0).
  [[nodiscard]] address node_address(const std::string& host, int port) const;

 private:
  struct node {
    address where;
    int replicas = 0;
  };
  // Reads CLUSTER SLOTS from `from` (under m_); false if it could not be asked. With `first`, a
  // standalone server sets the mode, and final errors are thrown.
  bool load_from(const address& from, clock::time_point deadline, bool first);

  address seed_;
  std::mutex m_;
  enum class mode : std::uint8_t { unknown, standalone, cluster } mode_ = mode::unknown;
  std::vector<node> nodes_;                        // masters
  std::array<std::int16_t, cluster_slots> owner_;  // index into nodes_, -1: none
  clock::time_point refreshed_{};
};

// The routing of this process for a seed address (created on first use).
std::shared_ptr<routing> routing_for(const address& seed);

}  // namespace cppless::shared::detail
