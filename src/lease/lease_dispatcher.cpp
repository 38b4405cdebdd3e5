#include "executor.hpp"
#include "lease_client.hpp"
#include "token.hpp"

#include <cppless/lease.hpp>
#include <cppless/worker.hpp>

#include <cstdlib>

namespace cppless {

namespace {
// Any program that uses lease_dispatcher links this object file, so registering the executor
// mode here makes every such program able to serve as a leased executor (chosen before main).
[[maybe_unused]] const bool executor_registered = [] {
  detail::add_worker_mode(&lease_detail::executor_mode);
  return true;
}();

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}
}  // namespace

double lease_usage::cost(double per_allocation_s, double per_compute_s, double per_hot_poll_s) const {
  auto seconds = [](std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); };
  return per_allocation_s * seconds(allocation) + per_compute_s * seconds(compute) + per_hot_poll_s * seconds(hot_poll);
}

lease_dispatcher lease_dispatcher::from_env() {
  lease_options options;
  if (lease_detail::current_executor_link()) {
    lease_dispatcher nested(options);
    nested.nested_ = true;
    return nested;
  }
  options.resource_manager = env_or("CPPLESS_RESOURCE_MANAGER", "");
  options.user = env_or("CPPLESS_USER", env_or("USER", ""));
  try {
    options.secret = lease::secret_from_env("CPPLESS_SECRET");
  } catch (const std::exception& e) {
    throw error(std::string("cppless lease: ") + e.what());
  }
  if (options.resource_manager.empty()) throw error("cppless lease: CPPLESS_RESOURCE_MANAGER is not set (tcp://host:port)");
  return lease_dispatcher(std::move(options));
}

lease_dispatcher::lease_dispatcher(lease_options options) : options_(std::move(options)) {
  nested_ = lease_detail::current_executor_link() != nullptr;
}

lease_instance lease_dispatcher::create_instance(const lease_request& request) const {
  if (nested_) {
    lease_instance nested;
    static_cast<instance&>(nested) = instance(lease_detail::current_executor_link());
    return nested;
  }
  if (request.cores == 0) throw error("cppless lease: a lease needs at least one core");
  return lease_instance(std::make_shared<lease_detail::lease_client>(options_, request));
}

lease_instance::lease_instance(std::shared_ptr<lease_detail::lease_client> client)
    : instance(client), client_(std::move(client)) {}

namespace {
lease_detail::lease_client& need(const std::shared_ptr<lease_detail::lease_client>& c) {
  if (!c) throw error("cppless lease: this instance holds no lease (empty, or nested inside an executor)");
  return *c;
}
}  // namespace

lease_usage lease_instance::usage() const { return need(client_).usage(); }
std::string lease_instance::lease_id() const { return need(client_).lease_id(); }
std::vector<lease_executor> lease_instance::executors() const { return need(client_).executors(); }
std::chrono::system_clock::time_point lease_instance::expires() const { return need(client_).expires(); }
std::string lease_instance::state() const { return need(client_).state(); }
void lease_instance::release() { need(client_).release(); }

}  // namespace cppless
