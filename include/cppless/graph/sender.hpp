// cppless/graph/sender.hpp — typed handles on graph nodes: sender<Ts...> and future<T>.
//
// sender<Ts...> is a node that, once it succeeded, sends the values Ts... to its successors
// (sender<> for schedule() and void tasks, sender<T> for a task returning T, sender<A, B> for
// when_all of a sender<A> and a sender<B>). Its future() is a graph::future of void, T, or
// std::tuple<Ts...>. Handles are cheap copies; while one is alive the node's value is kept on
// the host (so it can still be read or get successors).
#pragma once

#include <cppless/archive.hpp>
#include <cppless/error.hpp>
#include <cppless/graph/core.hpp>

#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

namespace cppless::graph {

namespace detail {

// A refcounted reference to one node of one graph.
class node_handle {
 public:
  node_handle() = default;
  node_handle(std::shared_ptr<graph_core> core, node_id n) : core_(std::move(core)), id_(n) {
    if (core_) core_->acquire(id_);
  }
  node_handle(const node_handle& o) : node_handle(o.core_, o.id_) {}
  node_handle(node_handle&& o) noexcept : core_(std::move(o.core_)), id_(o.id_) {}
  node_handle& operator=(node_handle o) noexcept {
    std::swap(core_, o.core_);
    std::swap(id_, o.id_);
    return *this;
  }
  ~node_handle() {
    if (core_) core_->release(id_);
  }

  bool valid() const { return core_ != nullptr; }
  node_id id() const { return id_; }
  graph_core& core() const {
    if (!core_) throw error("cppless graph: use of an empty sender or future");
    return *core_;
  }
  const std::shared_ptr<graph_core>& shared_core() const { return core_; }
  const node_core& node() const { return core().node(id_); }

 private:
  std::shared_ptr<graph_core> core_;
  node_id id_ = no_node;
};

// What a future of a sender<Ts...> holds: void, T, or std::tuple<Ts...>.
template <class... Ts>
struct value_of {
  using type = std::tuple<Ts...>;
};
template <>
struct value_of<> {
  using type = void;
};
template <class T>
struct value_of<T> {
  using type = T;
};

template <class T>
struct is_tuple : std::false_type {};
template <class... Ts>
struct is_tuple<std::tuple<Ts...>> : std::true_type {};

template <class T>
void decode_segment(const segment& s, T& into) {
  input_archive in(s->data(), s->size());
  in(into);
  in.expect_end();
}

}  // namespace detail

// The typed result of a node. get() drives the graph until the node ended and decodes its
// value (again on every call: the future keeps the encoded value, not a decoded copy).
template <class T>
class future {
 public:
  future() = default;

  bool valid() const { return handle_.valid(); }
  // Ended (succeeded or failed); does not drive the graph.
  bool ready() const { return handle_.node().ended(); }
  bool failed() const { return handle_.node().state == node_state::failed; }

  void wait() const {
    graph_core& g = handle_.core();
    const node_id n = handle_.id();
    if (!g.node(n).ended()) g.run_until([&g, n] { return g.node(n).ended(); });
  }

  // The node's value; rethrows the node's error (a failed input's error for a dependent).
  T get() const {
    wait();
    const node_core& x = handle_.node();
    if (x.state == node_state::failed) std::rethrow_exception(x.error);
    if constexpr (!std::is_void_v<T>) {
      T value{};
      try {
        decode(x, value);
      } catch (const decode_error& e) {
        throw protocol_error(std::string("cppless graph: result of ") + x.describe() + " could not be decoded: " + e.what());
      }
      return value;
    }
  }

  // The thesis' name for get() (code written for the paper ports over).
  T value() const { return get(); }

  // Runs `callback(future<T>)` on the host once the node ended, from inside whichever call
  // drives the graph (await_all, get, wait); it may read the value and add nodes (dynamic
  // graphs). Registered on an ended node, it runs at the next of those calls.
  template <class Callback>
  void on_ready(Callback&& callback) const {
    static_assert(std::is_invocable_v<std::decay_t<Callback>&, future<T>>,
                  "cppless graph: on_ready's callback must be callable with the node's graph::future");
    // The listener holds a plain handle count, not a shared_ptr: a graph abandoned with the
    // node unended must not keep itself alive through its own listeners.
    graph_core& g = handle_.core();
    const node_id n = handle_.id();
    g.acquire(n);  // the value stays on the host until the callback ran
    g.listen(n, [&g, n, cb = std::decay_t<Callback>(std::forward<Callback>(callback))]() mutable {
      future<T> self(detail::node_handle(g.shared_from_this(), n));
      g.release(n);
      cb(self);
    });
  }

  // Call statistics of a task node (empty for sources and joins).
  const call_stats& stats() const { return handle_.node().stats; }
  node_id id() const { return handle_.id(); }

  // Internal: made by sender::future().
  explicit future(detail::node_handle handle) : handle_(std::move(handle)) {}

 private:
  // One segment holds the whole value (a task's result, even a std::tuple it returned); a
  // when_all's tuple has one segment per element.
  template <class V>
  static void decode(const node_core& x, V& value) {
    if (x.value.size() == 1) return detail::decode_segment(x.value[0], value);
    if constexpr (detail::is_tuple<V>::value) {
      if (x.value.size() == std::tuple_size_v<V>)
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
          (detail::decode_segment(x.value[I], std::get<I>(value)), ...);
        }(std::make_index_sequence<std::tuple_size_v<V>>{});
    }
    throw decode_error("the node holds " + std::to_string(x.value.size()) + " values");
  }

  detail::node_handle handle_;
};

template <class... Ts>
class sender {
 public:
  using value_type = typename detail::value_of<Ts...>::type;

  sender() = default;

  // A future of this node's value; may be taken before, while or after the node runs.
  graph::future<value_type> future() const;

  node_id id() const { return handle_.id(); }
  bool valid() const { return handle_.valid(); }
  node_state state() const { return handle_.node().state; }

  // The thesis' nodes were pointers (`c->future()`); this keeps such code compiling.
  const sender* operator->() const { return this; }

  // Internal: for then/when_all and futures.
  explicit sender(detail::node_handle handle) : handle_(std::move(handle)) {}
  const detail::node_handle& handle() const { return handle_; }

 private:
  detail::node_handle handle_;
};

template <class... Ts>
graph::future<typename sender<Ts...>::value_type> sender<Ts...>::future() const {
  return graph::future<value_type>(handle_);
}

}  // namespace cppless::graph
