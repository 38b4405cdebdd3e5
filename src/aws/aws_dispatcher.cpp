#include "runtime.hpp"
#ifndef CPPLESS_AWS_FUNCTION_BUILD
#include "invoke_client.hpp"
#endif

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

#ifdef CPPLESS_AWS_FUNCTION_BUILD
// The function build (zig, glibc 2.34 floor) carries the runtime loop only: it has no libcurl
// to invoke Lambda with, so a function cannot dispatch further functions from inside Lambda.
namespace {
[[noreturn]] void no_nested_dispatch() {
  throw error("cppless: this is a Lambda function build (the runtime only, without libcurl): dispatching "
              "from inside a Lambda function to other Lambda functions is not supported; dispatch from the host "
              "(see docs/aws.md, \"Nested dispatch\")");
}
}  // namespace

aws_dispatcher aws_dispatcher::from_env(aws_options) { no_nested_dispatch(); }
aws_dispatcher::aws_dispatcher(aws_options options) : options_(std::move(options)) { no_nested_dispatch(); }
instance aws_dispatcher::create_instance() const { no_nested_dispatch(); }
std::string aws_dispatcher::function_name(const std::string&, const config_values&) const { no_nested_dispatch(); }
aws_totals aws_dispatcher::totals() const { no_nested_dispatch(); }
#else
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
#endif

}  // namespace cppless
