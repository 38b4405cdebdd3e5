// Worker mode is chosen here, before the user's main runs: the link wraps main
// (-Wl,--wrap=main, added by the cppless::cppless CMake target) so that a process started as a
// worker serves calls instead, and a process asked for its manifest prints it.
#include <cppless/entry.hpp>
#include <cppless/worker.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace cppless {

namespace {
// Lets `cppless manifest` recognise a cppless executable before it runs it.
[[gnu::used]] const char* const kept_marker = detail::executable_marker;

bool& worker_flag() {
  static bool flag = false;
  return flag;
}
}  // namespace

bool in_worker() { return worker_flag(); }

namespace detail {
namespace {
std::vector<worker_mode>& extra_modes() {
  static std::vector<worker_mode> modes;
  return modes;
}
}  // namespace
void add_worker_mode(worker_mode mode) { extra_modes().push_back(mode); }
void mark_worker_process() { worker_flag() = true; }
}  // namespace detail

std::optional<int> worker_main(int argc, char** argv) {
  if (const char* manifest = std::getenv("CPPLESS_MANIFEST"); manifest && *manifest) {
    std::string json = registry::global().manifest_json();
    std::fwrite(json.data(), 1, json.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
    return 0;
  }
  for (auto mode : detail::extra_modes()) {
    if (auto code = mode(argc, argv)) return code;
  }
  return std::nullopt;
}

}  // namespace cppless

extern "C" int __real_main(int argc, char** argv, char** envp);

extern "C" int __wrap_main(int argc, char** argv, char** envp) {
  if (auto code = cppless::worker_main(argc, argv)) {
    std::fflush(nullptr);
    std::_Exit(*code);  // skip static destructors of a program whose main never ran
  }
  return __real_main(argc, argv, envp);
}
