// Without Clang's capture reflection, a closure holding a std::string must be rejected.
#include <cppless/cppless.hpp>

#include <string>

int main() {
  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();
  std::string text = "needs reflection";
  std::size_t result = 0;
  cppless::dispatch(instance, [text] { return text.size(); }, result);
}
