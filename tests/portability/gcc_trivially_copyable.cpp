// With GCC (no capture reflection) trivially copyable closures and serializable arguments work.
#include <cppless/cppless.hpp>
#include <cstdio>
int main() {
  cppless::local_dispatcher d; auto inst = d.create_instance();
  int a = 20; double b = 1.5;
  double r = 0;
  cppless::dispatch(inst, [a, b](int c) { return a * b + c; }, r, 12);
  cppless::wait(inst, 1);
  auto f = cppless::async(inst, [](std::string s) { return s.size(); }, std::string("hello"));
  std::printf("%g %zu\n", r, f.get());
  return r == 42 ? 0 : 1;
}
