// cppless/testing/local_cluster.hpp — a private Redis Cluster on free loopback ports, for tests
// and benchmarks: `masters` redis-servers with --cluster-enabled yes, each with `replicas`
// replicas, joined by `redis-cli --cluster create` (or given all slots by hand when there is one
// master), stopped by pid when the object goes. Not user API (target cppless_shared_testing).
//
//   cppless::testing::local_cluster cluster({.masters = 3, .replicas = 1});
//   auto store = cppless::shared::store::connect(cluster.url());
#pragma once

#include <cppless/testing/local_redis.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cppless::testing {

class local_cluster {
 public:
  struct options {
    int masters = 3;
    int replicas = 1;            // per master (0 with a single master)
    int node_timeout_ms = 1000;  // cluster-node-timeout: how soon a dead master is failed over
  };

  explicit local_cluster(options opts);
  local_cluster() : local_cluster(options{}) {}
  ~local_cluster();
  local_cluster(const local_cluster&) = delete;
  local_cluster& operator=(const local_cluster&) = delete;

  // redis://127.0.0.1:<port of the first node>: any node will do for a client.
  [[nodiscard]] std::string url() const;
  [[nodiscard]] std::size_t size() const noexcept { return nodes_.size(); }
  [[nodiscard]] local_redis& node(std::size_t i) { return *nodes_.at(i); }
  // The node that serves the key's slot as master now (asked of a live node).
  local_redis& master_for(std::string_view key);
  // Waits until every live node reports cluster_state:ok; throws cppless::error after `limit`.
  void wait_until_ok(std::chrono::milliseconds limit = std::chrono::seconds(30));
  // One command on the node at `port` (hiredis); the reply as text (errors included).
  static std::string command(int port, const std::vector<std::string>& argv);

 private:
  void wait_for(bool replicas_attached, std::chrono::milliseconds limit);

  options opts_;
  std::vector<std::unique_ptr<local_redis>> nodes_;
};

}  // namespace cppless::testing
