// A string_view points into the host's memory: capturing one must not compile.
#include <cppless/cppless.hpp>

#include <string_view>

int main() {
  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();
  std::string_view name = "host memory";
  std::size_t result = 0;
  cppless::dispatch(instance, [name] { return name.size(); }, result);
}
