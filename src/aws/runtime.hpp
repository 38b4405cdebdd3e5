// The Lambda custom-runtime worker mode (see runtime.cpp).
#pragma once

#include <optional>

namespace cppless::aws {
// Serves invocations and returns the exit code when AWS_LAMBDA_RUNTIME_API is set; else nothing.
std::optional<int> runtime_mode(int argc, char** argv);
}  // namespace cppless::aws
