// cppless/graph/executor.hpp — the interface that runs a task graph (the thesis' executor).
//
// The builder owns the graph's structure and semantics (node states, failure propagation,
// futures, host callbacks: graph_core); an executor decides when and where nodes run. The
// default is the thesis' host controller (host_controller.hpp): results return to the host,
// which sends the successors. Another executor, e.g. one that runs a whole graph remotely
// without the host in the loop, implements the same three calls and reports back through
// graph_core::begin / succeed / fail.
//
// Per-node executor state: keep it in a vector indexed by node_id (ids are dense, from 0).
#pragma once

#include <cppless/graph/node.hpp>

#include <cstddef>
#include <functional>
#include <string>

namespace cppless::graph {

class graph_core;

class executor {
 public:
  virtual ~executor() = default;

  // A node joined the graph in state `waiting`. Its inputs are older nodes, none failed (a
  // node with a failed input fails at once and is never shown to the executor). It may start
  // the node right away if its inputs have succeeded.
  virtual void added(graph_core& g, node_id n) = 0;

  // Moves the graph forward until `stop()` holds. stop() is checked whenever nodes ended;
  // it is false on entry. Throws if nothing can end any more.
  virtual void drive(graph_core& g, const std::function<bool()>& stop) = 0;

  // Nodes started and not ended yet.
  virtual std::size_t in_flight() const = 0;

  virtual std::string name() const = 0;
};

}  // namespace cppless::graph
