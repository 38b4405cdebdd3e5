// cppless/graph.hpp — the task graph API (the thesis' schedule / then / when_all / await_all).
//
//   cppless::graph::builder builder(instance);             // over any dispatcher instance
//   auto a = cppless::schedule(builder);                     // a start node (sender of void)
//   auto b = cppless::then(a, [] { return 12; });            // runs remotely once a is done
//   auto c = cppless::then(b, [](int m) { return m + 1; });
//   auto d = cppless::then(cppless::when_all(b, c), [](int x, int y) { return x * y; });
//   auto f = d.future();                                     // graph::future<int>
//   builder.await_all();                                     // throws graph_error on failures
//   int v = f.get();                                         // 156
//
// A node starts once its inputs succeeded; independent nodes are in flight together. A failed
// node fails its dependents with the same error; other branches go on. Nodes may be added at
// any time, also from future::on_ready callbacks (dynamic graphs). The executor is an
// interface (graph/executor.hpp); the default is the host controller (graph/host_controller.hpp).
// See docs/graph.md.
#pragma once

#include <cppless/graph/builder.hpp>
#include <cppless/graph/core.hpp>
#include <cppless/graph/error.hpp>
#include <cppless/graph/executor.hpp>
#include <cppless/graph/host_controller.hpp>
#include <cppless/graph/node.hpp>
#include <cppless/graph/sender.hpp>
