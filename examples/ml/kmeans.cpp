// k-means with the centroids in shared objects (Crucial's evaluation), against serial and
// std::thread runs of the same code; exits 1 unless all three models are equal.
//
//   kmeans_example [--n 200000] [--d 2] [--k 8] [--iterations 10] [--workers 2]
#include "../common/args.hpp"
#include "problems.hpp"
#include "run.hpp"

int main(int argc, char** argv) {
  const ml::kmeans problem(example::option_long(argc, argv, "--n", 200'000), static_cast<int>(example::option_long(argc, argv, "--d", 2)),
                           static_cast<int>(example::option_long(argc, argv, "--k", 8)), 42);
  return ml::run_all("kmeans", problem, static_cast<int>(example::option_long(argc, argv, "--workers", 2)),
                     static_cast<int>(example::option_long(argc, argv, "--iterations", 10)));
}
