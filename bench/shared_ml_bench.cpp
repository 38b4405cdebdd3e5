// bench_shared_ml — Crucial's applications (examples/ml): k-means and logistic regression, each
// run serially, with std::thread and as cppless functions sharing their model through Redis, in
// one run; JSON lines (suite "ml"): seconds, speedup over the serial run, milliseconds per
// iteration spent on shared state, and whether the model equals the serial one.
//
//   bench_shared_ml [--workers 2] [--iterations 10]
#include "../examples/common/args.hpp"
#include "../examples/ml/problems.hpp"
#include "../examples/ml/run.hpp"

int main(int argc, char** argv) {
  const int workers = static_cast<int>(example::option_long(argc, argv, "--workers", 2));
  const int iterations = static_cast<int>(example::option_long(argc, argv, "--iterations", 10));
  int failed = 0;
  failed |= ml::run_all("kmeans", ml::kmeans(1'000'000, 2, 8, 42), workers, iterations);
  failed |= ml::run_all("logreg", ml::logreg(400'000, 16, 7), workers, iterations);
  return failed;
}
