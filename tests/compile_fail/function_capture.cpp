// A std::function cannot travel to another process: capturing one must not compile.
#include <cppless/cppless.hpp>

#include <functional>

int main() {
  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();
  std::function<int()> callback = [] { return 1; };
  int result = 0;
  cppless::dispatch(instance, [callback] { return callback(); }, result);
}
