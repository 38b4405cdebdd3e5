// The application kernels with a C interface, for peers that call native code through an FFI
// (Lithops runs Python functions: its tasks load this library with ctypes, so that every
// contender runs the same machine code and the comparison measures the frameworks).
#include "../apps/kernels.hpp"

extern "C" {
double bench_pi(long n, unsigned seed) { return bench_kernels::pi_estimate(n, seed); }
long bench_queens(int n, int depth, const int* prefixes, std::size_t count) {
  return bench_kernels::queens_solve(n, depth, prefixes, count);
}
}
