// Recursive offload: every fib(n) above a cutoff dispatches fib(n-1) and fib(n-2) from inside
// the worker that runs it. Nested calls go back to the host's pool; a worker waiting for its
// children serves other calls meanwhile, so the recursion cannot deadlock and the number of
// processes stays bounded by the pool size.
//
//   fib_example [--n 24] [--cutoff 16]
#include <cppless/cppless.hpp>

#include "../common/args.hpp"

#include <cstdio>

long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

long fib_remote(int n, int cutoff) {
  if (n <= cutoff) return fib_serial(n);
  cppless::local_dispatcher dispatcher;  // inside a worker: forwards to the host's pool
  auto instance = dispatcher.create_instance();
  auto task = [](int k, int c) { return fib_remote(k, c); };
  long a = 0, b = 0;
  cppless::dispatch(instance, task, a, n - 1, cutoff);
  cppless::dispatch(instance, task, b, n - 2, cutoff);
  cppless::wait(instance, 2);
  return a + b;
}

int main(int argc, char** argv) {
  const int n = static_cast<int>(example::option_long(argc, argv, "--n", 24));
  const int cutoff = static_cast<int>(example::option_long(argc, argv, "--cutoff", 16));
  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();
  auto f = cppless::async(instance, [](int k, int c) { return fib_remote(k, c); }, n, cutoff);
  const long result = f.get();
  const long expected = fib_serial(n);
  std::printf("fib(%d) = %ld (%s), cutoff %d, %u workers started\n", n, result,
              result == expected ? "correct" : "WRONG", cutoff, dispatcher.workers_started());
  return result == expected ? 0 : 1;
}
