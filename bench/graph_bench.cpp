// Task graph benchmark: what a graph node costs on top of the call it makes.
//
// Three DAG shapes of no-op tasks (each adds its inputs), each run through
//   graph      the graph API (host controller)
//   async      the same DAG written with plain cppless::async: wave by wave, each wave's
//              futures read before the next wave is sent (how one writes a DAG without a graph)
//   threads    the same DAG in this process on a 2-thread pool with dependency counters (the
//              scheduling floor; stands in for Taskflow, which Debian does not package)
// over two backends:
//   local      warm worker processes (the real thing)
//   inline     a backend that runs each call in the host process at once, so what remains is
//              the cost of cppless itself (encoding, bookkeeping), without any transport
//
// Shapes: chain (depth D, every node on the critical path: per-node latency), layered (width W x
// depth D, each node reads two nodes of the layer before), fan (1 -> W -> when_all -> 1).
//
// JSON lines on stdout ({"suite":"graph",...}), a table on stderr.
//   bench_graph [--quick] [--workers N] [--only local|inline|threads]   (default: a worker per core)
#include <cppless/cppless.hpp>
#include <cppless/graph.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

// --- a transport-free backend ----------------------------------------------------------------

class inline_backend final : public cppless::backend {
 public:
  void submit(cppless::invocation&& call, completion done) override {
    queue_.push_back({std::move(call), std::move(done)});
  }
  void progress(std::unique_lock<std::mutex>&, cppless::clock::time_point) override {
    auto batch = std::move(queue_);
    queue_.clear();
    for (auto& [call, done] : batch) {
      cppless::outcome out;
      const cppless::entry* e = cppless::registry::global().find(call.function_id);
      try {
        e->invoke(call.payload.span(), out.result);
      } catch (...) {
        out.error = std::current_exception();
      }
      done(std::move(out));
    }
  }
  std::string name() const override { return "inline"; }

 private:
  std::vector<std::pair<cppless::invocation, completion>> queue_;
};

// --- the three shapes, through the graph API ----------------------------------------------------

struct shape {
  const char* name;
  int width, depth;
  long tasks() const {
    if (std::strcmp(name, "chain") == 0) return depth;
    if (std::strcmp(name, "layered") == 0) return long{width} * depth;
    return width + 2;  // fan: source task, W tasks, the sum
  }
};

long expected_of(const shape& s) {
  if (std::strcmp(s.name, "chain") == 0) return s.depth;  // 1, then +1 per node
  if (std::strcmp(s.name, "layered") == 0) {
    long sum = long{s.width} * (s.width - 1) / 2;
    for (int d = 1; d < s.depth; ++d) sum *= 2;
    return sum;
  }
  return long{s.width} * (s.width - 1) / 2 + s.width;  // sum of (i + 1)
}

long run_graph(cppless::instance& inst, const shape& s) {
  cppless::graph::builder b(inst);
  auto start = cppless::schedule(b);
  if (std::strcmp(s.name, "chain") == 0) {
    auto x = cppless::then(start, [] { return 1L; });
    for (int d = 1; d < s.depth; ++d) x = cppless::then(x, [](long v) { return v + 1; });
    auto f = x.future();
    b.await_all();
    return f.get();
  }
  if (std::strcmp(s.name, "layered") == 0) {
    std::vector<cppless::graph::sender<long>> layer;
    for (long i = 0; i < s.width; ++i) layer.push_back(cppless::then(start, [i] { return i; }));
    for (int d = 1; d < s.depth; ++d) {
      std::vector<cppless::graph::sender<long>> next;
      for (int i = 0; i < s.width; ++i)
        next.push_back(cppless::then(cppless::when_all(layer[i], layer[(i + 1) % s.width]), [](long x, long y) { return x + y; }));
      layer = std::move(next);
    }
    auto total = cppless::then(cppless::when_all(layer), [](const std::vector<long>& xs) {
      long t = 0;
      for (long x : xs) t += x;
      return t;
    });
    auto f = total.future();
    layer.clear();
    b.await_all();
    return f.get();
  }
  auto one = cppless::then(start, [] { return 1L; });
  std::vector<cppless::graph::sender<long>> parts;
  for (long i = 0; i < s.width; ++i) parts.push_back(cppless::then(one, [i](long o) { return i + o; }));
  auto total = cppless::then(cppless::when_all(parts), [](const std::vector<long>& xs) {
    long t = 0;
    for (long x : xs) t += x;
    return t;
  });
  auto f = total.future();
  parts.clear();
  b.await_all();
  return f.get();
}

// --- the same DAGs with cppless::async, wave by wave ---------------------------------------------

long run_async(cppless::instance& inst, const shape& s) {
  if (std::strcmp(s.name, "chain") == 0) {
    long v = cppless::async(inst, [] { return 1L; }).get();
    for (int d = 1; d < s.depth; ++d) v = cppless::async(inst, [](long x) { return x + 1; }, v).get();
    return v;
  }
  auto sum = [](const std::vector<long>& xs) {
    long t = 0;
    for (long x : xs) t += x;
    return t;
  };
  if (std::strcmp(s.name, "layered") == 0) {
    std::vector<long> values(s.width);
    std::vector<cppless::future<long>> wave;
    for (long i = 0; i < s.width; ++i) wave.push_back(cppless::async(inst, [i] { return i; }));
    for (int i = 0; i < s.width; ++i) values[i] = wave[i].get();
    for (int d = 1; d < s.depth; ++d) {
      wave.clear();
      for (int i = 0; i < s.width; ++i)
        wave.push_back(cppless::async(inst, [](long x, long y) { return x + y; }, values[i], values[(i + 1) % s.width]));
      for (int i = 0; i < s.width; ++i) values[i] = wave[i].get();
    }
    return cppless::async(inst, sum, values).get();
  }
  const long one = cppless::async(inst, [] { return 1L; }).get();
  std::vector<cppless::future<long>> wave;
  for (long i = 0; i < s.width; ++i) wave.push_back(cppless::async(inst, [i](long o) { return i + o; }, one));
  std::vector<long> values;
  for (auto& f : wave) values.push_back(f.get());
  return cppless::async(inst, sum, values).get();
}

// --- the same DAGs on threads: a minimal dependency-counting pool --------------------------------

class thread_dag {
 public:
  explicit thread_dag(unsigned threads) {
    for (unsigned i = 0; i < threads; ++i) pool_.emplace_back([this] { work(); });
  }
  ~thread_dag() {
    {
      std::lock_guard hold(lock_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : pool_) t.join();
  }

  // Adds a task depending on `inputs` (indices of earlier tasks); returns its index.
  std::size_t add(std::function<long(const std::vector<long>&)> fn, std::vector<std::size_t> inputs) {
    const std::size_t id = nodes_.size();
    auto& n = nodes_.emplace_back(std::make_unique<node>());
    n->fn = std::move(fn);
    n->inputs = std::move(inputs);
    n->missing = static_cast<int>(n->inputs.size());
    for (auto in : n->inputs) nodes_[in]->successors.push_back(id);
    return id;
  }

  void run() {
    remaining_ = nodes_.size();
    {
      std::lock_guard hold(lock_);
      for (std::size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i]->missing == 0) ready_.push_back(i);
    }
    wake_.notify_all();
    std::unique_lock hold(lock_);
    done_.wait(hold, [this] { return remaining_ == 0; });
  }
  long value(std::size_t id) const { return nodes_[id]->value; }

 private:
  struct node {
    std::function<long(const std::vector<long>&)> fn;
    std::vector<std::size_t> inputs, successors;
    std::atomic<int> missing{0};
    long value = 0;
  };

  void work() {
    std::unique_lock hold(lock_);
    for (;;) {
      wake_.wait(hold, [this] { return stop_ || !ready_.empty(); });
      if (stop_) return;
      const std::size_t id = ready_.front();
      ready_.pop_front();
      hold.unlock();
      node& n = *nodes_[id];
      std::vector<long> args;
      for (auto in : n.inputs) args.push_back(nodes_[in]->value);
      n.value = n.fn(args);
      std::vector<std::size_t> woke;
      for (auto s : n.successors)
        if (nodes_[s]->missing.fetch_sub(1) == 1) woke.push_back(s);
      hold.lock();
      for (auto s : woke) ready_.push_back(s);
      if (woke.size() > 1) wake_.notify_all();
      else if (!woke.empty()) wake_.notify_one();
      if (--remaining_ == 0) done_.notify_all();
    }
  }

  std::vector<std::unique_ptr<node>> nodes_;
  std::vector<std::thread> pool_;
  std::mutex lock_;
  std::condition_variable wake_, done_;
  std::deque<std::size_t> ready_;
  std::size_t remaining_ = 0;
  bool stop_ = false;
};

long run_threads(const shape& s) {
  thread_dag dag(2);
  auto add_inputs = [](const std::vector<long>& in) {
    long t = 0;
    for (long x : in) t += x;
    return t;
  };
  std::size_t last = 0;
  if (std::strcmp(s.name, "chain") == 0) {
    last = dag.add([](const std::vector<long>&) { return 1L; }, {});
    for (int d = 1; d < s.depth; ++d) last = dag.add([](const std::vector<long>& in) { return in[0] + 1; }, {last});
  } else if (std::strcmp(s.name, "layered") == 0) {
    std::vector<std::size_t> layer;
    for (long i = 0; i < s.width; ++i) layer.push_back(dag.add([i](const std::vector<long>&) { return i; }, {}));
    for (int d = 1; d < s.depth; ++d) {
      std::vector<std::size_t> next;
      for (int i = 0; i < s.width; ++i) next.push_back(dag.add(add_inputs, {layer[i], layer[(i + 1) % s.width]}));
      layer = std::move(next);
    }
    last = dag.add(add_inputs, layer);
  } else {
    const auto one = dag.add([](const std::vector<long>&) { return 1L; }, {});
    std::vector<std::size_t> parts;
    for (long i = 0; i < s.width; ++i) parts.push_back(dag.add([i](const std::vector<long>& in) { return i + in[0]; }, {one}));
    last = dag.add(add_inputs, parts);
  }
  dag.run();
  return dag.value(last);
}

// --- measurement ---------------------------------------------------------------------------------

struct result {
  std::string shape, api, backend;
  long tasks;
  double median_ms;
};

template <class F>
double median_ms(int repeats, F&& run) {
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = clock_type::now();
    run();
    ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void emit(const result& r) {
  std::printf("{\"suite\":\"graph\",\"case\":\"%s\",\"api\":\"%s\",\"backend\":\"%s\",\"tasks\":%ld,"
              "\"median_ms\":%.3f,\"per_task_us\":%.3f}\n",
              r.shape.c_str(), r.api.c_str(), r.backend.c_str(), r.tasks, r.median_ms, r.median_ms * 1e3 / static_cast<double>(r.tasks));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;  // "local", "inline" or "threads": run that column only
  cppless::local_options options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--workers") == 0 && i + 1 < argc) options.workers = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
  }
  const int repeats = quick ? 3 : 7;
  const std::vector<shape> shapes = {
      {"chain", 1, quick ? 500 : 2000},
      {"layered", 100, quick ? 20 : 100},
      {"fan", quick ? 1000 : 5000, 1},
  };

  cppless::local_dispatcher local(options);
  auto local_instance = local.create_instance();
  auto inline_instance = cppless::instance(std::make_shared<inline_backend>());
  struct target {
    const char* name;
    cppless::instance* inst;
  };
  const target targets[] = {{"local", &local_instance}, {"inline", &inline_instance}};

  // Warm the workers (and the first-call paths) before measuring.
  if (only.empty() || only == "local")
    for (const auto& s : shapes) (void)run_graph(local_instance, s);

  std::vector<result> results;
  bool all_correct = true;
  auto check = [&](long got, const shape& s, const char* what) {
    if (got != expected_of(s)) {
      std::fprintf(stderr, "WRONG result for %s/%s: %ld, expected %ld\n", s.name, what, got, expected_of(s));
      all_correct = false;
    }
  };
  for (const auto& s : shapes) {
    for (const auto& t : targets) {
      if (!only.empty() && only != t.name) continue;
      long got = 0;
      double g = median_ms(repeats, [&] { got = run_graph(*t.inst, s); });
      check(got, s, "graph");
      results.push_back({s.name, "graph", t.name, s.tasks(), g});
      emit(results.back());
      double a = median_ms(repeats, [&] { got = run_async(*t.inst, s); });
      check(got, s, "async");
      results.push_back({s.name, "async", t.name, s.tasks(), a});
      emit(results.back());
    }
    if (!only.empty() && only != "threads") continue;
    long got = 0;
    double th = median_ms(repeats, [&] { got = run_threads(s); });
    check(got, s, "threads");
    results.push_back({s.name, "threads", "in-process", s.tasks(), th});
    emit(results.back());
  }

  std::fprintf(stderr, "\n%-9s %-8s %-11s %8s %12s %14s\n", "shape", "api", "backend", "tasks", "median", "per task");
  for (const auto& r : results)
    std::fprintf(stderr, "%-9s %-8s %-11s %8ld %9.2f ms %11.2f us\n", r.shape.c_str(), r.api.c_str(), r.backend.c_str(),
                 r.tasks, r.median_ms, r.median_ms * 1e3 / static_cast<double>(r.tasks));
  return all_correct ? 0 : 1;
}
