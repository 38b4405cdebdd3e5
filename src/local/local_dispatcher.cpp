#include "local_pool.hpp"
#include "uplink.hpp"

#include <cppless/local.hpp>
#include <cppless/worker.hpp>

namespace cppless {

local_dispatcher::local_dispatcher() : local_dispatcher(local_options{}) {}

local_dispatcher::local_dispatcher(local_options options) : options_(options) {
  // Inside a worker, calls go back to the host's pool: processes stay bounded, no deadlock.
  if (in_worker()) backend_ = local::current_uplink();
  if (!backend_) backend_ = std::make_shared<local::local_pool>(options_);
}

instance local_dispatcher::create_instance() const { return instance(backend_); }

unsigned local_dispatcher::worker_count() const {
  auto* pool = dynamic_cast<local::local_pool*>(backend_.get());
  return pool ? pool->alive() : 0;
}

unsigned local_dispatcher::workers_started() const {
  auto* pool = dynamic_cast<local::local_pool*>(backend_.get());
  return pool ? pool->started() : 0;
}

}  // namespace cppless
