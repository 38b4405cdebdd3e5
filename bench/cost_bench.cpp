// bench_cost: the TACO paper's cost/parallelism study on pi, from traces of a real run on the
// local backend priced with the Lambda model: the same total work split into N functions, at two
// memory sizes (compile-time configs), each run traced (cppless::trace) and its trace priced by
// `cppless report --json` (the one implementation of the price model). Local workers do not get
// more CPU with more memory as Lambda's do: the memory size changes the price, not the time.
//
//   bench_cost [--quick] [--samples N] [--repeat R] [--keep-traces DIR]
//
// One JSON line per run: {"suite":"cost","app":"pi","memory_mb":..,"functions":N,"seconds":..,
// "gb_seconds":..,"lambda_x86_usd":..,"lambda_arm_usd":..,"price_model":"..."}.
#include "apps/kernels.hpp"

#include <cppless/cppless.hpp>
#include <cppless/trace.hpp>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

template <unsigned MemoryMb>
double run_pi(cppless::instance& instance, long samples, int functions) {
  using config = cppless::config<cppless::with_memory<MemoryMb>, cppless::with_timeout<300>>;
  std::vector<double> parts(static_cast<std::size_t>(functions));
  const long each = samples / functions;
  auto fn = [each](unsigned seed) { return bench_kernels::pi_estimate(each, seed); };
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < functions; ++i) cppless::dispatch<config>(instance, fn, parts[static_cast<std::size_t>(i)], static_cast<unsigned>(i));
  cppless::wait(instance, parts.size());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

nlohmann::json price(const std::string& trace) {
  const std::string out = trace + ".report.json";
  const std::string command = std::string("'") + CPPLESS_CLI + "' report '" + trace + "' --json '" + out + "' >/dev/null";
  if (std::system(command.c_str()) != 0) throw std::runtime_error("cppless report failed on " + trace);
  std::ifstream in(out);
  nlohmann::json j = nlohmann::json::parse(in);
  fs::remove(out);
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  long samples = 100'000'000;
  int repeat = 3;
  std::string keep;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--samples") == 0 && i + 1 < argc) samples = std::atol(argv[++i]);
    else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--keep-traces") == 0 && i + 1 < argc) keep = argv[++i];
  }
  if (quick) samples = std::min(samples, 20'000'000L), repeat = std::min(repeat, 1);
  const std::vector<int> functions = quick ? std::vector<int>{1, 2, 8, 32} : std::vector<int>{1, 2, 4, 8, 16, 32, 64};
  const fs::path dir = keep.empty() ? fs::temp_directory_path() / ("cppless-cost-" + std::to_string(::getpid())) : fs::path(keep);
  fs::create_directories(dir);

  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();
  (void)run_pi<1024>(instance, 1'000'000, 4);  // start the workers
  (void)run_pi<2048>(instance, 1'000'000, 4);

  for (int r = 0; r < repeat; ++r) {
    for (int n : functions) {
      for (unsigned memory : {1024u, 2048u}) {  // in turn, so load drift hits both alike
        const fs::path trace = dir / ("pi_m" + std::to_string(memory) + "_n" + std::to_string(n) + "_r" + std::to_string(r) + ".jsonl");
        cppless::trace::start(trace.string());
        const double s = memory == 1024 ? run_pi<1024>(instance, samples, n) : run_pi<2048>(instance, samples, n);
        cppless::trace::stop();
        const nlohmann::json p = price(trace.string());
        std::printf("{\"suite\":\"cost\",\"app\":\"pi\",\"samples\":%ld,\"memory_mb\":%u,\"functions\":%d,\"repeat\":%d,"
                    "\"seconds\":%.6f,\"calls\":%zu,\"gb_seconds\":%.6f,\"lambda_x86_usd\":%.10f,\"lambda_arm_usd\":%.10f,"
                    "\"price_model\":\"AWS Lambda list prices as of %s, applied to a local run's trace\"}\n",
                    samples, memory, n, r, s, p["timeline"].size(), p["total"]["gb_seconds"].get<double>(),
                    p["total"]["lambda_x86_usd"].get<double>(), p["total"]["lambda_arm_usd"].get<double>(),
                    p["prices"]["as_of"].get<std::string>().c_str());
        std::fflush(stdout);
        if (keep.empty()) fs::remove(trace);
      }
    }
  }
  if (keep.empty()) fs::remove_all(dir);
  return 0;
}
