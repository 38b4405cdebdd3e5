// cppless/graph/builder.hpp — building a task graph: builder, schedule, then, when_all.
//
//   cppless::graph::builder builder(instance);                 // host controller over any instance
//   auto a = cppless::schedule(builder);                        // sender<>
//   auto b = cppless::then(a, [] { return 12; });               // sender<int>
//   auto c = cppless::then<config>(b, [](int m) { return m + 1; });
//   auto d = cppless::then(cppless::when_all(b, c), [](int x, int y) { return x * y; });
//   auto f = d.future();
//   builder.await_all();                                        // f.get() == 156
//
// then() registers fn exactly as dispatch<Config> does (the same executable runs it as a
// worker) and encodes its captures at once; a node starts as soon as its inputs succeeded, so a
// graph runs while it is being built and may grow while it runs.
#pragma once

#include <cppless/archive.hpp>
#include <cppless/capture.hpp>
#include <cppless/config.hpp>
#include <cppless/entry.hpp>
#include <cppless/graph/core.hpp>
#include <cppless/graph/host_controller.hpp>
#include <cppless/graph/sender.hpp>

#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace cppless::graph {

class builder {
 public:
  // The default executor: the host controller, sending nodes through `inst`.
  explicit builder(instance inst, host_controller_options options = {})
      : builder(std::move(inst), std::make_unique<host_controller>(options)) {}
  builder(instance inst, std::unique_ptr<executor> exec)
      : core_(std::make_shared<graph_core>(std::move(inst), std::move(exec))) {}

  // Runs until every node added so far (and any added meanwhile by on_ready callbacks) ended.
  // Returns totals if no node failed since the previous await_all(); otherwise throws
  // graph_error listing those failures (each is reported once).
  summary await_all() { return core_->await_all(); }

  summary totals() const { return core_->totals(); }
  std::size_t size() const { return core_->size(); }
  std::size_t unended() const { return core_->unended(); }

  graph_core& core() const { return *core_; }
  const std::shared_ptr<graph_core>& shared_core() const { return core_; }

 private:
  std::shared_ptr<graph_core> core_;
};

namespace detail {

template <class... Lists>
struct concat;
template <>
struct concat<> {
  using type = sender<>;
};
template <class... As>
struct concat<sender<As...>> {
  using type = sender<As...>;
};
template <class... As, class... Bs, class... Rest>
struct concat<sender<As...>, sender<Bs...>, Rest...> {
  using type = typename concat<sender<As..., Bs...>, Rest...>::type;
};

template <class S>
struct is_sender : std::false_type {};
template <class... Ts>
struct is_sender<sender<Ts...>> : std::true_type {};

inline graph_core& same_graph(const node_handle& first) { return first.core(); }
template <class... Hs>
graph_core& same_graph(const node_handle& first, const Hs&... rest) {
  graph_core& g = first.core();
  if (((&rest.core() != &g) || ...))
    throw error("cppless graph: when_all of senders from different builders");
  return g;
}

}  // namespace detail

}  // namespace cppless::graph

namespace cppless {

// A start node: a sender of nothing, done as soon as it is added.
inline graph::sender<> schedule(graph::builder& b) {
  const graph::node_id n = b.core().add(graph::node_kind::source, {}, false);
  return graph::sender<>(graph::detail::node_handle(b.shared_core(), n));
}

// A task node: fn(values of input...) runs remotely (with Config, as dispatch<Config>) once
// input succeeded; its result is the new node's value. Throws capture_error at once if a
// capture cannot travel.
template <class Config = default_config, class F, class... Ts>
auto then(const graph::sender<Ts...>& input, F&& fn) {
  using Fn = std::decay_t<F>;
  static_assert(!std::is_pointer_v<Fn>,
                "cppless::then: a function pointer cannot travel to a worker; wrap the call in a lambda: "
                "[](auto... xs) { return f(xs...); }");
  static_assert(std::is_invocable_v<Fn&, Ts&&...>,
                "cppless::then: the function cannot be called with the values of its input (a when_all's "
                "values are spread as separate arguments; schedule() and void tasks send none)");
  if constexpr (std::is_invocable_v<Fn&, Ts&&...>) {  // no cascade of errors after the assertion
    // The same result type as the worker's entry computes (entry.hpp).
    using R = std::decay_t<std::invoke_result_t<Fn&, Ts&&...>>;
    static_assert(std::is_void_v<R> || (is_serializable_v<R> && std::is_default_constructible_v<R>),
                  "cppless::then: a node's result travels back to the host and on to its successors, so it must "
                  "be serializable (cereal convention) and default constructible");
    using entry_type = cppless::detail::function_entry<Config, Fn, Ts...>;
    (void)entry_type::registration;  // registers the entry at start-up in every process
    const entry& e = entry_type::get();
    byte_buffer closure;
    output_archive ar(closure);
    cppless::detail::save_closure(ar, static_cast<const Fn&>(fn));
    graph::graph_core& g = input.handle().core();
    const graph::node_id n = g.add(graph::node_kind::task, {input.id()}, !std::is_void_v<R>, &e, std::move(closure));
    using out = std::conditional_t<std::is_void_v<R>, graph::sender<>, graph::sender<R>>;
    return out(graph::detail::node_handle(input.handle().shared_core(), n));
  } else {
    return graph::sender<>();
  }
}

// A join node: succeeds when every input succeeded; its values are the inputs' values in
// order (a then() after it receives them as separate arguments; its future is a tuple).
// Fails as soon as one input fails, with that input's error.
template <class... Senders>
auto when_all(const Senders&... inputs) {
  static_assert(sizeof...(Senders) > 0, "cppless::when_all needs at least one sender");
  static_assert((graph::detail::is_sender<Senders>::value && ...), "cppless::when_all takes graph senders");
  using out = typename graph::detail::concat<Senders...>::type;
  graph::graph_core& g = graph::detail::same_graph(inputs.handle()...);
  const bool has_value = !std::is_same_v<out, graph::sender<>>;
  const graph::node_id n = g.add(graph::node_kind::join, {inputs.id()...}, has_value);
  return out(graph::detail::node_handle(g.shared_from_this(), n));
}

// A join over a number of senders known at run time (fan-in). For sender<T> its value is one
// std::vector<T> (in the order given); for sender<> it is a barrier sending nothing.
template <class... Ts>
auto when_all(const std::vector<graph::sender<Ts...>>& inputs) {
  static_assert(sizeof...(Ts) <= 1, "cppless::when_all(vector): the senders must each send one value or none");
  if (inputs.empty()) throw error("cppless::when_all: an empty vector of senders (no graph to add the node to)");
  graph::graph_core& g = inputs.front().handle().core();
  graph::id_list ids;
  for (const auto& s : inputs) {
    if (&s.handle().core() != &g) throw error("cppless graph: when_all of senders from different builders");
    ids.push_back(s.id());
  }
  if constexpr (sizeof...(Ts) == 0) {
    const graph::node_id n = g.add(graph::node_kind::join, std::move(ids), false);
    return graph::sender<>(graph::detail::node_handle(g.shared_from_this(), n));
  } else {
    using T = std::tuple_element_t<0, std::tuple<Ts...>>;
    static_assert(!std::is_same_v<T, bool>,
                  "cppless::when_all(vector): std::vector<bool> is bit-packed on the wire; send char or int instead");
    const graph::node_id n = g.add(graph::node_kind::gather, std::move(ids), true);
    return graph::sender<std::vector<T>>(graph::detail::node_handle(g.shared_from_this(), n));
  }
}

}  // namespace cppless
