// A user program with no cppless-specific code in main: workers are chosen by the wrapped main.
#include <cppless/cppless.hpp>

#include <cstdio>
#include <string>

int main() {
  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();
  const std::string who = "installed cppless";
  std::string greeting;
  cppless::dispatch(instance, [who](int n) { return who + " x" + std::to_string(n); }, greeting, 2);
  cppless::wait(instance, 1);
  std::printf("%s\n", greeting.c_str());
  return greeting == "installed cppless x2" ? 0 : 1;
}
