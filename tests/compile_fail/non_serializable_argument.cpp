// An argument type without serialization must not compile.
#include <cppless/cppless.hpp>

class opaque {
 public:
  explicit opaque(int v) : v_(v) {}
  int get() const { return v_; }

 private:
  int v_;
};

int main() {
  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();
  int result = 0;
  cppless::dispatch(instance, [](const opaque& o) { return o.get(); }, result, opaque(3));
}
