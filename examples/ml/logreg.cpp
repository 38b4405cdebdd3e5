// Logistic regression by gradient descent with the weights in shared objects (Crucial's
// evaluation), against serial and std::thread runs of the same code; exits 1 unless all three
// models are equal.
//
//   logreg_example [--n 100000] [--d 16] [--iterations 10] [--workers 2]
#include "../common/args.hpp"
#include "problems.hpp"
#include "run.hpp"

int main(int argc, char** argv) {
  const ml::logreg problem(example::option_long(argc, argv, "--n", 100'000), static_cast<int>(example::option_long(argc, argv, "--d", 16)), 7);
  const int code = ml::run_all("logreg", problem, static_cast<int>(example::option_long(argc, argv, "--workers", 2)),
                               static_cast<int>(example::option_long(argc, argv, "--iterations", 10)));
  std::fprintf(stderr, "logreg: accuracy of the serial model on its data %.3f\n",
               problem.accuracy(ml::run_serial(problem, 1, static_cast<int>(example::option_long(argc, argv, "--iterations", 10))).model));
  return code;
}
