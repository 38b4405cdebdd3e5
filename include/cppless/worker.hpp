// cppless/worker.hpp — worker mode: the same executable serving calls instead of running main.
//
// With the CMake target cppless::cppless, nothing is needed: main is wrapped at link time
// (-Wl,--wrap=main) and worker mode is chosen before the user's main runs. A build that cannot
// wrap main calls cppless::worker_main first thing in main:
//
//   int main(int argc, char** argv) {
//     if (auto code = cppless::worker_main(argc, argv)) return *code;
//     ...
#pragma once

#include <optional>

namespace cppless {

// If this process was started as a worker (or to print its manifest), serves and returns the
// exit code; otherwise returns nothing and the program goes on as the host.
std::optional<int> worker_main(int argc, char** argv);

// True inside a worker process (nested dispatch goes to the host's pool).
bool in_worker();

namespace detail {
// Bytes every cppless executable contains (worker_main.cpp keeps them), so that `cppless
// manifest` recognises one before running it.
inline constexpr char executable_marker[] = "CPPLESS-EXECUTABLE-MARKER-v1";

// Other backends add their worker modes here (e.g. the AWS Lambda runtime loop when
// AWS_LAMBDA_RUNTIME_API is set), from a static initialiser in an object file that the host
// code already links. A mode returns an exit code if it recognised its environment and served.
using worker_mode = std::optional<int> (*)(int argc, char** argv);
void add_worker_mode(worker_mode mode);
// Called by a mode that serves calls in this process: in_worker() is true from then on.
void mark_worker_process();
}  // namespace detail

}  // namespace cppless
