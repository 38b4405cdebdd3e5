// Runs one problem the three ways (serial, std::thread, cppless with shared objects), checks that
// the models are bitwise equal, and reports the times (text on stderr, JSON lines on stdout).
#pragma once

#include "iterative.hpp"

#include <cppless/testing/local_redis.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace ml {

// Returns 0 when every run produced the serial model, 1 otherwise.
template <class P>
int run_all(const char* app, const P& problem, int workers, int iterations) {
  namespace sh = cppless::shared;
  std::unique_ptr<cppless::testing::local_redis> own;
  if (std::getenv("CPPLESS_REDIS") == nullptr) own = std::make_unique<cppless::testing::local_redis>();
  auto store = own ? sh::store::connect(own->url()) : sh::store::from_env();
  cppless::local_options options;
  options.workers = static_cast<unsigned>(workers);  // every worker of a run holds one
  cppless::local_dispatcher dispatcher(options);
  auto inst = dispatcher.create_instance();
  {  // start the workers before timing
    std::vector<int> warm(static_cast<std::size_t>(workers));
    for (auto& w : warm) cppless::dispatch(inst, [](int v) { return v; }, w, 1);
    cppless::wait(inst, warm.size());
  }
  const run_result serial = run_serial(problem, workers, iterations);
  const run_result threads = run_threads(problem, workers, iterations);
  const run_result offloaded = run_cppless(problem, inst, store, workers, iterations);
  store.remove_namespace();
  const bool same = threads.model == serial.model && offloaded.model == serial.model;
  std::fprintf(stderr, "%s: %d workers, %d iterations: serial %.3f s, std::thread %.3f s (%.2fx), cppless %.3f s (%.2fx; %.2f ms "
               "per iteration on shared state); models %s\n",
               app, workers, iterations, serial.seconds, threads.seconds, serial.seconds / threads.seconds, offloaded.seconds,
               serial.seconds / offloaded.seconds, offloaded.shared_ms_per_iteration, same ? "equal" : "DIFFER");
  for (const auto* r : {&serial, &threads, &offloaded}) {
    const char* mode = r == &serial ? "serial" : r == &threads ? "threads" : "cppless";
    std::printf("{\"suite\":\"ml\",\"app\":\"%s\",\"mode\":\"%s\",\"workers\":%d,\"iterations\":%d,\"seconds\":%.6f,"
                "\"speedup_vs_serial\":%.3f,\"shared_ms_per_iteration\":%.3f,\"model_equal\":%s}\n",
                app, mode, workers, iterations, r->seconds, serial.seconds / r->seconds, r->shared_ms_per_iteration,
                r->model == serial.model ? "true" : "false");
  }
  return same ? 0 : 1;
}

}  // namespace ml
