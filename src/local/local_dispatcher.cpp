#include "local_pool.hpp"
#include "uplink.hpp"
#include "worker_process.hpp"

#include <cppless/local.hpp>
#include <cppless/error.hpp>
#include <cppless/worker.hpp>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

namespace cppless {

namespace local {
int run_worker(const char* setting);  // worker_loop.cpp
}

namespace {
// The local backend's worker mode: a process started by a local pool (CPPLESS_WORKER set).
// Registered from this file, which every program that starts local workers links.
std::optional<int> local_worker_mode(int, char**) {
  const char* setting = std::getenv(local::worker_env);
  if (!setting || !*setting) return std::nullopt;
  const std::string copy = setting;
  ::unsetenv(local::worker_env);  // programs a function starts are not workers
  detail::mark_worker_process();
  return local::run_worker(copy.c_str());
}
[[maybe_unused]] const bool local_mode_registered = (detail::add_worker_mode(&local_worker_mode), true);

// The defaults, with the environment's overrides (like OMP_NUM_THREADS: tune a built program
// without recompiling it). Malformed values are refused loudly rather than ignored.
local_options options_from_env() {
  local_options options;
  auto number = [](const char* name, long long max) -> long long {
    const char* text = std::getenv(name);
    if (!text || !*text) return -1;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < 0 || v > max)
      throw error(std::string("cppless: ") + name + "='" + text + "' is not a whole number from 0 to " + std::to_string(max));
    return v;
  };
  if (const long long workers = number("CPPLESS_WORKERS", 4096); workers >= 0)
    options.workers = static_cast<unsigned>(workers);
  if (const long long poll = number("CPPLESS_HOT_POLL_US", 10'000'000); poll >= 0)
    options.hot_poll = std::chrono::microseconds(poll);
  if (const long long prefetch = number("CPPLESS_PREFETCH", 64); prefetch >= 0)
    options.prefetch = static_cast<unsigned>(prefetch);
  return options;
}
}  // namespace

local_dispatcher::local_dispatcher() : local_dispatcher(options_from_env()) {}

local_dispatcher::local_dispatcher(local_options options) : options_(options) {
  // Inside a worker, calls go back to the host's pool: processes stay bounded, no deadlock.
  if (in_worker()) backend_ = local::current_uplink();
  if (!backend_) {
    pool_ = std::make_shared<local::local_pool>(options_);
    backend_ = pool_;
  }
}

instance local_dispatcher::create_instance() const { return instance(backend_); }

unsigned local_dispatcher::worker_count() const { return pool_ ? pool_->alive() : 0; }

unsigned local_dispatcher::workers_started() const { return pool_ ? pool_->started() : 0; }

}  // namespace cppless
