// cppless/graph/core.hpp — the state of one task graph, shared by its builder, senders and futures.
//
// graph_core keeps the nodes and the rules every executor shares: a node fails when an input
// fails (with the same exception object), values stay on the host only while something can
// still read them, host callbacks run between executor steps (so they may add nodes), and
// await_all reports each failure once. Executors call begin/succeed/fail; user-facing code
// (builder.hpp, sender.hpp) calls add/run_until/acquire/release.
//
// One thread at a time uses a graph (like an instance). Results of calls may arrive on another
// thread that drives the same backend; executors hand them over through their own lock.
#pragma once

#include <cppless/error.hpp>
#include <cppless/graph/error.hpp>
#include <cppless/graph/executor.hpp>
#include <cppless/graph/node.hpp>
#include <cppless/instance.hpp>

#include <algorithm>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace cppless::graph {

class graph_core : public std::enable_shared_from_this<graph_core> {
 public:
  graph_core(instance inst, std::unique_ptr<executor> exec) : instance_(std::move(inst)), executor_(std::move(exec)) {
    if (!executor_) throw error("cppless graph: no executor given");
  }
  graph_core(const graph_core&) = delete;
  graph_core& operator=(const graph_core&) = delete;

  // --- for executors ------------------------------------------------------------------------

  node_core& node(node_id n) { return chunks_[n / chunk][n % chunk]; }
  const node_core& node(node_id n) const { return chunks_[n / chunk][n % chunk]; }
  std::size_t size() const { return size_; }
  instance& get_instance() { return instance_; }
  executor& get_executor() { return *executor_; }

  // The node starts (its inputs have all succeeded).
  void begin(node_id n) {
    node_core& x = node(n);
    x.state = node_state::running;
    if (x.kind == node_kind::task) ++calls_;
  }

  // The payload of a task node: its encoded captures, then its inputs' values in argument
  // order. Reads the inputs (their values may be released afterwards) and drops the closure.
  byte_buffer take_payload(node_id n) {
    node_core& x = node(n);
    std::size_t total = x.closure.size();
    for (node_id in : x.inputs)
      for (const segment& s : node(in).value) total += s->size();
    byte_buffer payload(total);
    payload.append(x.closure.data(), x.closure.size());
    for (node_id in : x.inputs)
      for (const segment& s : node(in).value) payload.append(s->data(), s->size());
    x.closure = byte_buffer();
    consume_inputs(x);
    return payload;
  }

  // The value of a join node: its inputs' segments side by side (shared, not copied).
  std::vector<segment> take_joined_value(node_id n) {
    node_core& x = node(n);
    std::vector<segment> value;
    for (node_id in : x.inputs) value.insert(value.end(), node(in).value.begin(), node(in).value.end());
    consume_inputs(x);
    return value;
  }

  // The value of a gather node: one std::vector<T> encoding, i.e. the count, then the inputs'
  // values (which for every T but bool is how a vector encodes its elements).
  std::vector<segment> take_gathered_value(node_id n) {
    node_core& x = node(n);
    std::size_t total = sizeof(std::uint64_t);
    for (node_id in : x.inputs)
      for (const segment& s : node(in).value) total += s->size();
    auto out = std::make_shared<byte_buffer>(total);
    const std::uint64_t count = x.inputs.size();
    out->append(&count, sizeof count);
    for (node_id in : x.inputs)
      for (const segment& s : node(in).value) out->append(s->data(), s->size());
    consume_inputs(x);
    return {std::move(out)};
  }

  void succeed(node_id n, std::vector<segment> value, call_stats stats = {}) {
    node_core& x = node(n);
    consume_inputs(x);
    x.value = std::move(value);
    x.stats = std::move(stats);
    x.state = node_state::succeeded;
    ++succeeded_;
    ended(x);
    maybe_release(x);
  }

  // The node failed with `error`; every dependent still waiting fails with the same object.
  void fail(node_id n, std::exception_ptr error, call_stats stats = {}) {
    node(n).stats = std::move(stats);
    std::vector<node_id> work{n};
    mark_failed(node(n), error, n);
    while (!work.empty()) {
      const node_id at = work.back();
      work.pop_back();
      // Index loop: successors is not modified here, but keep it robust to reallocation.
      for (std::size_t i = 0; i < node(at).successors.size(); ++i) {
        node_core& s = node(node(at).successors[i]);
        if (s.state != node_state::waiting) continue;
        mark_failed(s, error, n);
        work.push_back(s.id);
      }
    }
  }

  // --- for the builder, senders and futures ---------------------------------------------------

  // Adds a node after its inputs (which must belong to this graph). A node with a failed
  // input fails at once, with that input's error.
  node_id add(node_kind kind, id_list inputs, bool has_value, const entry* function = nullptr,
              byte_buffer closure = {}) {
    const auto id = static_cast<node_id>(size_);
    if (id == no_node) throw error("cppless graph: too many nodes");
    if (size_ % chunk == 0) chunks_.push_back(std::make_unique<node_core[]>(chunk));
    ++size_;
    node_core& x = node(id);
    x.id = id;
    x.kind = kind;
    x.has_value = has_value;
    x.inputs = std::move(inputs);
    x.function = function;
    x.closure = std::move(closure);
    ++unended_;
    const node_core* failed_input = nullptr;
    for (node_id in : x.inputs) {
      node_core& i = node(in);
      i.successors.push_back(id);
      ++i.unread;
      if (!failed_input && i.state == node_state::failed) failed_input = &i;
    }
    if (failed_input) {
      mark_failed(x, failed_input->error, failed_input->failed_from);
      return id;
    }
    // A node may end inside added() (a join of finished inputs): hold it like the handle the
    // caller is about to make, or its value would be released before anyone could read it.
    struct hold {
      node_core& x;
      ~hold() { --x.handles; }
    } held{x};
    ++x.handles;
    executor_->added(*this, id);
    return id;
  }

  // Live handles keep a node's value on the host (a future may read it, a sender may get new
  // successors).
  void acquire(node_id n) { ++node(n).handles; }
  void release(node_id n) {
    node_core& x = node(n);
    --x.handles;
    maybe_release(x);
  }

  // Runs `callback` on the host once the node ended (at once if it has, at the next step).
  void listen(node_id n, std::function<void()> callback) {
    node_core& x = node(n);
    if (x.ended()) callbacks_.push_back(std::move(callback));
    else x.listeners.push_back(std::move(callback));
  }

  // Drives the executor and runs host callbacks until `done()` holds. A callback that throws
  // ends this call with its exception (the graph stays consistent; calling again goes on).
  void run_until(const std::function<bool()>& done) {
    for (;;) {
      while (!callbacks_.empty()) {
        auto callback = std::move(callbacks_.front());
        callbacks_.pop_front();
        callback();
      }
      if (done()) return;
      executor_->drive(*this, [&] { return !callbacks_.empty() || done(); });
    }
  }

  // Every node ended and every callback ran; throws graph_error for failures not reported yet.
  summary await_all() {
    run_until([this] { return unended_ == 0 && callbacks_.empty(); });
    std::vector<failure> fresh;
    for (node_id n : failed_) {
      node_core& x = node(n);
      if (x.reported) continue;
      x.reported = true;
      fresh.push_back({n, x.describe(), x.failed_from, x.error});
    }
    failed_.clear();
    if (!fresh.empty()) {
      std::sort(fresh.begin(), fresh.end(), [](const failure& a, const failure& b) { return a.node < b.node; });
      throw graph_error(std::move(fresh), totals());
    }
    return totals();
  }

  summary totals() const { return {size_, succeeded_, failed_count_, calls_}; }
  std::size_t unended() const { return unended_; }

 private:
  void consume_inputs(node_core& x) {
    if (x.inputs_read) return;
    x.inputs_read = true;
    for (node_id in : x.inputs) {
      node_core& i = node(in);
      --i.unread;
      maybe_release(i);
    }
  }

  void mark_failed(node_core& x, const std::exception_ptr& error, node_id cause) {
    consume_inputs(x);  // it will never read them
    x.closure = byte_buffer();
    x.state = node_state::failed;
    x.error = error;
    x.failed_from = cause;
    ++failed_count_;
    failed_.push_back(x.id);
    ended(x);
  }

  void ended(node_core& x) {
    --unended_;
    for (auto& l : x.listeners) callbacks_.push_back(std::move(l));
    x.listeners.clear();
  }

  void maybe_release(node_core& x) {
    if (x.handles == 0 && x.unread == 0 && x.ended() && !x.value.empty()) {
      x.value.clear();
      x.value.shrink_to_fit();
    }
  }

  instance instance_;
  std::unique_ptr<executor> executor_;
  // Nodes in chunks: stable references while nodes are added, one allocation per `chunk`.
  static constexpr std::size_t chunk = 256;
  std::vector<std::unique_ptr<node_core[]>> chunks_;
  std::size_t size_ = 0;
  std::deque<std::function<void()>> callbacks_;
  std::vector<node_id> failed_;  // not reported by await_all yet
  std::size_t unended_ = 0, succeeded_ = 0, failed_count_ = 0, calls_ = 0;
};

}  // namespace cppless::graph
