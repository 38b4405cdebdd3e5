// The executor interface on its own: a graph run by an executor that never touches an instance.
// It runs every node in this process as soon as its inputs have succeeded, through the same
// type-erased node records (entry + encoded captures + encoded values) any executor gets.
#include "common.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <stdexcept>
#include <vector>

namespace {

using namespace cppless::graph;

class in_process_executor final : public executor {
 public:
  void added(graph_core& g, node_id n) override {
    std::deque<node_id> ready{n};
    while (!ready.empty()) {
      const node_id at = ready.front();
      ready.pop_front();
      node_core& x = g.node(at);
      bool inputs_done = true;
      for (node_id in : x.inputs) inputs_done &= g.node(in).state == node_state::succeeded;
      if (x.state != node_state::waiting || !inputs_done) continue;
      g.begin(at);
      ++runs;
      switch (x.kind) {
        case node_kind::source: g.succeed(at, {}); break;
        case node_kind::join: g.succeed(at, g.take_joined_value(at)); break;
        case node_kind::gather: g.succeed(at, g.take_gathered_value(at)); break;
        case node_kind::task: {
          auto payload = g.take_payload(at);
          auto result = std::make_shared<cppless::byte_buffer>();
          try {
            x.function->invoke(payload.span(), *result);
          } catch (...) {
            g.fail(at, std::current_exception());
            continue;
          }
          std::vector<segment> value;
          if (x.has_value) value.push_back(std::move(result));
          g.succeed(at, std::move(value));
        }
      }
      for (node_id s : g.node(at).successors) ready.push_back(s);
    }
  }
  void drive(graph_core&, const std::function<bool()>&) override {
    throw cppless::error("in_process_executor: everything ran when it was added");
  }
  std::size_t in_flight() const override { return 0; }
  std::string name() const override { return "in_process"; }

  int runs = 0;
};

TEST(GraphExecutor, AnotherExecutorRunsTheSameGraph) {
  auto instance = graph_test::dispatcher().create_instance();  // handed over, never used
  auto owned = std::make_unique<in_process_executor>();
  auto* exec = owned.get();
  builder b(instance, std::move(owned));
  auto a = cppless::schedule(b);
  auto x = cppless::then(a, [] { return 12; });
  auto y = cppless::then(x, [](int m) { return m + 1; });
  auto z = cppless::then(cppless::when_all(x, y), [](int p, int q) { return p * q; });
  std::vector<sender<int>> parts{x, y, z};
  auto sum = cppless::then(cppless::when_all(parts), [](const std::vector<int>& v) { return v[0] + v[1] + v[2]; });
  auto bad = cppless::then(x, [](int) -> int { throw std::runtime_error("in process"); });
  auto after_bad = cppless::then(bad, [](int v) { return v; });
  EXPECT_EQ(z.future().get(), 156);
  EXPECT_EQ(sum.future().get(), 12 + 13 + 156);
  EXPECT_THROW(after_bad.future().get(), std::runtime_error);
  EXPECT_THROW(b.await_all(), graph_error);
  EXPECT_EQ(exec->runs, 8);  // schedule, 3 tasks, join, gather, sum, bad (after_bad never ran)
  EXPECT_EQ(instance.pending(), 0u);
}

}  // namespace
