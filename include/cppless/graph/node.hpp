// cppless/graph/node.hpp — one node of a task graph, as executors see it (no user types left).
//
// The builder erases every type when a node is added: a task node keeps the registered entry
// of its function and its captures already encoded, and every value is kept as the bytes the
// wire carries. An executor can therefore run nodes anywhere a payload can go (the host
// controller sends them through an instance; an executor without the host could hand the same
// bytes to a remote orchestrator).
//
// Value layout: a node's value is a list of segments, one encoded value each, in argument
// order. A task returning T has one segment (none for void), a source none, a join
// (when_all) the concatenation of its inputs' segments, a gather one segment: the element
// count, then its inputs' segments (the encoding of std::vector<T>). The payload of a task is its encoded
// captures followed by its inputs' segments, which is exactly what dispatch would encode for
// fn(values...): the archive format has no framing between values.
#pragma once

#include <cppless/byte_buffer.hpp>
#include <cppless/entry.hpp>
#include <cppless/instance.hpp>

#include <cstdint>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace cppless::graph {

using node_id = std::uint32_t;
inline constexpr node_id no_node = ~node_id{0};

// One encoded value, shared (never copied) by the joins and futures that read it.
using segment = std::shared_ptr<const byte_buffer>;

// The ids of a node's inputs or successors. Most nodes have one or two: those stay inside the
// node, so building and dropping a big graph does not cost two allocations per node.
class id_list {
 public:
  id_list() = default;
  id_list(std::initializer_list<node_id> ids) {
    for (node_id id : ids) push_back(id);
  }
  template <class It>
  id_list(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }

  void push_back(node_id id) {
    if (spill_.empty() && size_ < inline_capacity) {
      inline_[size_++] = id;
      return;
    }
    if (spill_.empty()) spill_.assign(inline_, inline_ + size_);
    spill_.push_back(id);
    ++size_;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const node_id* begin() const { return spill_.empty() ? inline_ : spill_.data(); }
  const node_id* end() const { return begin() + size_; }
  node_id operator[](std::size_t i) const { return begin()[i]; }

 private:
  static constexpr std::size_t inline_capacity = 2;
  node_id inline_[inline_capacity] = {};
  std::uint32_t size_ = 0;
  std::vector<node_id> spill_;
};

enum class node_kind : std::uint8_t {
  source,  // schedule(builder): ends as soon as it is added; a value of nothing
  task,    // then(input, fn): fn(input values...) runs remotely
  join,    // when_all(a, b, ...): the inputs' values side by side; runs nowhere
  gather,  // when_all(vector of sender<T>): one std::vector<T> made of the inputs' values
};

enum class node_state : std::uint8_t {
  waiting,    // some input has not succeeded yet
  running,    // handed to the executor's workers
  succeeded,  // value holds the result
  failed,     // error holds the failure (its own, or the failed input's)
};

struct node_core {
  node_id id = no_node;
  node_kind kind = node_kind::task;
  node_state state = node_state::waiting;
  bool has_value = false;    // tasks: fn returns something (one segment); void: none
  bool inputs_read = false;  // its inputs' values were consumed (or will never be)

  id_list inputs;      // argument order
  id_list successors;  // nodes having this one as an input, in the order added

  // Task nodes: what to run. The closure is encoded when then() is called (captures are
  // copied at that moment, as with dispatch) and dropped once the call is sent.
  const entry* function = nullptr;
  byte_buffer closure;

  std::vector<segment> value;  // once succeeded; released when nothing can read it any more
  std::exception_ptr error;    // once failed
  node_id failed_from = no_node;  // the node whose own failure this is (itself for a root)
  call_stats stats;            // task nodes: the call's statistics, once ended

  // Who may still read `value`: live senders/futures of this node, and successors that have
  // not consumed it yet. When both drop to zero the value is released (big graphs would
  // otherwise keep every intermediate result on the host).
  std::uint32_t handles = 0;
  std::uint32_t unread = 0;
  bool reported = false;  // a failure already reported by await_all

  // Host callbacks (future::on_ready) to run once the node ended.
  std::vector<std::function<void()>> listeners;

  bool ended() const { return state == node_state::succeeded || state == node_state::failed; }

  // "#7 (lambda at tests/graph/graph_test.cpp:12:3)", for messages.
  std::string describe() const {
    std::string what = "#" + std::to_string(id) + " ";
    switch (kind) {
      case node_kind::source: return what + "schedule";
      case node_kind::join:
      case node_kind::gather: return what + "when_all";
      case node_kind::task: return what + (function ? function->name : std::string("task"));
    }
    return what;
  }
};

}  // namespace cppless::graph
