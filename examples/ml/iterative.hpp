// Iterative learning with shared model state (Crucial's k-means and logistic regression, section
// 5 of CloudButton D4.3): `parts` workers each compute a partial result on their share of the
// data for the current model, and the model is updated from all partials once per iteration.
// Three runs of the same problem code:
//
//   serial    one loop, the partials computed one after another
//   threads   std::thread workers, the partials in memory, std::barrier between phases
//   cppless   cppless functions on local workers; the model in a shared atomic, the partials in a
//             shared map (one entry per worker), a shared barrier between phases; worker 0
//             updates the model (combining the partials in worker order)
//
// The partials are combined in the same order by all three, so the models are bitwise equal: the
// check of every run. A problem P provides (and is serializable: it travels to the workers and
// regenerates its data from a seed there):
//
//   std::vector<double> initial_model() const;
//   std::vector<double> partial(const std::vector<double>& model, int part, int parts) const;
//   std::vector<double> update(const std::vector<double>& model,
//                              const std::vector<std::vector<double>>& partials) const;
#pragma once

#include <cppless/cppless.hpp>
#include <cppless/shared.hpp>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace ml {

using model_t = std::vector<double>;

struct run_result {
  model_t model;
  double seconds = 0;
  double shared_ms_per_iteration = 0;  // cppless: median over workers of their time in shared-object calls
};

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class P>
run_result run_serial(const P& p, int parts, int iterations) {
  const auto t0 = std::chrono::steady_clock::now();
  model_t model = p.initial_model();
  for (int it = 0; it < iterations; ++it) {
    std::vector<model_t> partials;
    for (int w = 0; w < parts; ++w) partials.push_back(p.partial(model, w, parts));
    model = p.update(model, partials);
  }
  return {model, seconds_since(t0), 0};
}

template <class P>
run_result run_threads(const P& p, int parts, int iterations) {
  const auto t0 = std::chrono::steady_clock::now();
  model_t model = p.initial_model();
  std::vector<model_t> partials(static_cast<std::size_t>(parts));
  std::barrier sync(parts);
  std::vector<std::thread> threads;
  for (int w = 0; w < parts; ++w)
    threads.emplace_back([&, w] {
      for (int it = 0; it < iterations; ++it) {
        partials[static_cast<std::size_t>(w)] = p.partial(model, w, parts);
        sync.arrive_and_wait();  // every partial is in
        if (w == 0) model = p.update(model, partials);
        sync.arrive_and_wait();  // the new model is out
      }
    });
  for (auto& t : threads) t.join();
  return {model, seconds_since(t0), 0};
}

// One worker of the cppless run: returns the milliseconds it spent in shared-object calls per
// iteration (its mean).
template <class P>
double cppless_worker(const P& p, const cppless::shared::store& store, int w, int parts, int iterations) {
  namespace sh = cppless::shared;
  using clk = std::chrono::steady_clock;
  auto model = store.atomic<model_t>("model");
  auto partials = store.map<int, model_t>("partials");
  auto sync = store.barrier("sync", parts);
  double shared_s = 0;
  auto timed = [&](auto&& f) {
    const auto t0 = clk::now();
    f();
    shared_s += seconds_since(t0);
  };
  for (int it = 0; it < iterations; ++it) {
    model_t current;
    timed([&] { current = model.load(); });
    model_t mine = p.partial(current, w, parts);
    timed([&] {
      partials.put(w, mine);
      sync.arrive_and_wait(std::chrono::minutes(5));  // every partial is in
    });
    if (w == 0) {
      std::vector<std::pair<int, model_t>> all;
      timed([&] { all = partials.snapshot(); });
      std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      std::vector<model_t> ordered;
      for (auto& [k, v] : all) ordered.push_back(std::move(v));
      model_t next = p.update(current, ordered);
      timed([&] { model.store(next); });
    }
    timed([&] { sync.arrive_and_wait(std::chrono::minutes(5)); });  // the new model is out
  }
  return shared_s * 1e3 / iterations;
}

template <class P>
run_result run_cppless(const P& p, cppless::instance& inst, const cppless::shared::store& store, int parts, int iterations) {
  const auto t0 = std::chrono::steady_clock::now();
  store.atomic<model_t>("model").store(p.initial_model());
  std::vector<cppless::future<double>> calls;
  for (int w = 0; w < parts; ++w)
    calls.push_back(cppless::async(
        inst, [p, store](int worker, int n, int its) { return cppless_worker(p, store, worker, n, its); }, w, parts, iterations));
  std::vector<double> shared_ms;
  for (auto& c : calls) shared_ms.push_back(c.get());
  std::sort(shared_ms.begin(), shared_ms.end());
  return {store.atomic<model_t>("model").load(), seconds_since(t0), shared_ms[shared_ms.size() / 2]};
}

}  // namespace ml
