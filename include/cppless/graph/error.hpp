// cppless/graph/error.hpp — what await_all() reports: a summary, or an error naming the failed nodes.
//
// A failed node fails its dependents with the same exception object; await_all() lists every
// failed node once (the ones that failed themselves and those that inherited the failure),
// so a caller sees what broke without having extracted a future from every node.
#pragma once

#include <cppless/error.hpp>
#include <cppless/graph/node.hpp>

#include <cstddef>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace cppless::graph {

struct failure {
  node_id node = no_node;
  std::string name;          // node_core::describe()
  node_id cause = no_node;   // the node whose own failure this is (== node for a root)
  std::exception_ptr error;  // the same object the node's future rethrows
  bool root() const { return node == cause; }
};

// What a successful await_all() returns.
struct summary {
  std::size_t nodes = 0;      // in the graph so far
  std::size_t succeeded = 0;
  std::size_t failed = 0;     // over the graph's life (await_all throws only for new ones)
  std::size_t calls = 0;      // task nodes sent to workers
};

// Thrown by await_all() when nodes failed since the previous await_all().
class graph_error : public error {
 public:
  graph_error(std::vector<failure> failures, summary totals)
      : error(describe(failures)), failures_(std::move(failures)), totals_(totals) {}

  // Every node that failed since the previous report, in the order of their ids.
  const std::vector<failure>& failures() const noexcept { return failures_; }
  const summary& totals() const noexcept { return totals_; }

  // The first root failure (rethrow it to handle it by type).
  std::exception_ptr first_error() const {
    for (const auto& f : failures_)
      if (f.root()) return f.error;
    return failures_.empty() ? nullptr : failures_.front().error;
  }

 private:
  static std::string message_of(const std::exception_ptr& e) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      return x.what();
    } catch (...) {
      return "unknown exception";
    }
  }

  // Roots with their messages (the first few), then how many dependents failed with them.
  static std::string describe(const std::vector<failure>& failures) {
    std::size_t roots = 0;
    std::string text;
    for (const auto& f : failures) {
      if (!f.root()) continue;
      if (++roots <= 5) text += "\n  " + f.name + ": " + message_of(f.error);
    }
    if (roots > 5) text += "\n  ... and " + std::to_string(roots - 5) + " more";
    const std::size_t dependents = failures.size() - roots;
    std::string head = "cppless graph: " + std::to_string(failures.size()) + " node" +
                       (failures.size() == 1 ? "" : "s") + " failed";
    if (dependents) head += " (" + std::to_string(dependents) + " because an input failed)";
    if (roots == 0 && !failures.empty())  // inputs failed in an earlier report
      text = "\n  " + failures.front().name + ": " + message_of(failures.front().error);
    return head + ":" + text;
  }

  std::vector<failure> failures_;
  summary totals_;
};

}  // namespace cppless::graph
