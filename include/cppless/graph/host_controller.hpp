// cppless/graph/host_controller.hpp — the default executor: the host sends every ready node.
//
// The thesis' host_controller_executor: for each node the number of inputs that have not
// succeeded is counted; a node whose count reaches zero is sent through the graph's instance
// (any dispatcher), its result comes back to the host, and the host sends the successors.
// Independent nodes are all in flight at once (the backend queues what its workers cannot take
// yet), unless max_in_flight caps them to bound the payloads held in the backend's queue.
//
// Results are reported by the backend under its own lock, possibly on another thread driving
// the same backend; sending successors from there would deadlock (submitting takes that lock),
// so results go through an inbox and are processed by the thread that drives the graph.
#pragma once

#include <cppless/error.hpp>
#include <cppless/graph/core.hpp>
#include <cppless/graph/executor.hpp>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace cppless::graph {

struct host_controller_options {
  std::size_t max_in_flight = 0;  // calls sent and not ended; 0: no cap
};

class host_controller final : public executor {
 public:
  explicit host_controller(host_controller_options options = {}) : options_(options) {}

  void added(graph_core& g, node_id n) override {
    if (missing_.size() <= n) missing_.resize(std::size_t{n} + 1, 0);
    std::uint32_t missing = 0;
    for (node_id in : g.node(n).inputs)
      if (g.node(in).state != node_state::succeeded) ++missing;
    missing_[n] = missing;
    if (missing == 0) start({n}, g);
  }

  void drive(graph_core& g, const std::function<bool()>& stop) override {
    for (;;) {
      process_inbox(g);
      if (stop()) return;
      if (in_flight_ == 0)
        throw error("cppless graph: the awaited nodes cannot end: nothing is running (executor " + name() + ")");
      g.get_instance().drive_until([box = inbox_.get()] { return box->any.load(std::memory_order_acquire); });
    }
  }

  std::size_t in_flight() const override { return in_flight_; }
  std::string name() const override { return "host_controller"; }

 private:
  struct inbox {
    std::mutex lock;
    std::vector<std::pair<node_id, outcome>> ended;
    std::atomic<bool> any{false};
  };

  // Runs the nodes in `ready` (all inputs succeeded): sources, joins and gathers end here at once,
  // which may make more nodes ready; tasks are sent. A worklist, not recursion: chains of
  // joins may be long.
  void start(std::deque<node_id> ready, graph_core& g) {
    while (!ready.empty()) {
      const node_id n = ready.front();
      ready.pop_front();
      node_core& x = g.node(n);
      if (x.state != node_state::waiting) continue;
      switch (x.kind) {
        case node_kind::source:
          g.begin(n);
          g.succeed(n, {});
          became_ready(g, n, ready);
          break;
        case node_kind::join:
          g.begin(n);
          g.succeed(n, g.take_joined_value(n));
          became_ready(g, n, ready);
          break;
        case node_kind::gather:
          g.begin(n);
          g.succeed(n, g.take_gathered_value(n));
          became_ready(g, n, ready);
          break;
        case node_kind::task:
          if (options_.max_in_flight && in_flight_ >= options_.max_in_flight) queued_.push_back(n);
          else send(g, n);
          break;
      }
    }
  }

  void became_ready(graph_core& g, node_id n, std::deque<node_id>& ready) {
    for (node_id s : g.node(n).successors)
      if (g.node(s).state == node_state::waiting && --missing_[s] == 0) ready.push_back(s);
  }

  void send(graph_core& g, node_id n) {
    node_core& x = g.node(n);
    g.begin(n);
    invocation call;
    call.function_id = x.function->id_hash;
    call.fingerprint = x.function->fingerprint;
    call.function_name = x.function->name.c_str();
    call.config = x.function->config;
    call.payload = g.take_payload(n);
    try {
      g.get_instance().submit_detached(std::move(call), [box = inbox_, n](outcome&& done) {
        std::lock_guard hold(box->lock);
        box->ended.emplace_back(n, std::move(done));
        box->any.store(true, std::memory_order_release);
      });
      ++in_flight_;
    } catch (...) {  // refused before sending (e.g. payload_too_large): this node fails alone
      g.fail(n, std::current_exception());
    }
  }

  void process_inbox(graph_core& g) {
    std::vector<std::pair<node_id, outcome>> ended;
    {
      std::lock_guard hold(inbox_->lock);
      ended.swap(inbox_->ended);
      inbox_->any.store(false, std::memory_order_relaxed);
    }
    std::deque<node_id> ready;
    for (auto& [n, done] : ended) {
      --in_flight_;
      if (!done.error && !g.node(n).has_value && !done.result.empty())
        done.error = std::make_exception_ptr(protocol_error("cppless graph: a void function returned bytes"));
      if (done.error) {
        g.fail(n, done.error, std::move(done.stats));
        continue;
      }
      std::vector<segment> value;
      if (g.node(n).has_value) value.push_back(std::make_shared<const byte_buffer>(std::move(done.result)));
      g.succeed(n, std::move(value), std::move(done.stats));
      became_ready(g, n, ready);
    }
    start(std::move(ready), g);
    while (!queued_.empty() && (!options_.max_in_flight || in_flight_ < options_.max_in_flight)) {
      const node_id n = queued_.front();
      queued_.pop_front();
      if (g.node(n).state == node_state::waiting) send(g, n);
    }
  }

  host_controller_options options_;
  std::shared_ptr<inbox> inbox_ = std::make_shared<inbox>();  // outlives the graph if calls do
  std::vector<std::uint32_t> missing_;  // per node: inputs that have not succeeded
  std::deque<node_id> queued_;          // ready tasks over max_in_flight
  std::size_t in_flight_ = 0;
};

}  // namespace cppless::graph
