#include "invoke_client.hpp"
#include "runtime.hpp"

#include <cppless/aws.hpp>
#include <cppless/worker.hpp>

#include <cstdlib>

namespace cppless {

namespace {
// Any program that uses aws_dispatcher links this object file, so registering the Lambda
// runtime here makes every such program a Lambda function too (chosen before main runs).
[[maybe_unused]] const bool runtime_registered = [] {
  detail::add_worker_mode(&aws::runtime_mode);
  return true;
}();
}  // namespace

aws_dispatcher aws_dispatcher::from_env(aws_options options) {
  options.settings = aws::settings::resolve();
  if (options.function_prefix.empty()) {
    // Set by `cppless deploy` inside Lambda, where the executable may run under another name.
    if (const char* prefix = std::getenv("CPPLESS_FUNCTION_PREFIX"); prefix && *prefix) options.function_prefix = prefix;
  }
  return aws_dispatcher(std::move(options));
}

aws_dispatcher::aws_dispatcher(aws_options options)
    : options_(std::move(options)), backend_(std::make_shared<aws::invoke_client>(options_)) {}

instance aws_dispatcher::create_instance() const { return instance(backend_); }

std::string aws_dispatcher::function_name(const std::string& entry_id, const config_values& config) const {
  return static_cast<const aws::invoke_client&>(*backend_).function_name(entry_id, config);
}

aws_totals aws_dispatcher::totals() const { return static_cast<const aws::invoke_client&>(*backend_).totals(); }

}  // namespace cppless
