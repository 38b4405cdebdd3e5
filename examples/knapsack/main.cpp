// 0/1 knapsack by branch and bound (the BOTS algorithm), offloaded to local workers with and
// without a shared bound: the thesis' knapsack (5.4) barely sped up because its tasks could not
// share the best value found so far; a shared best<> (Crucial's design, kept in Redis) gives every
// task the global incumbent, so they prune like the serial search does.
//
//   knapsack_example [--items 68] [--seed 1] [--spread 12] [--depth 8] [--refresh-us 1000]
//                    [--workers 0] [--input bots.input]
//
// Modes: serial (one process), offloaded/local-bound (each task prunes with its own best only, as
// in the thesis), offloaded/shared-bound (tasks read the shared best every --refresh-us of search
// and offer each improvement: a read is a Redis round trip, ~20 us, so it is paced by time).
// Tasks are dispatched in the order the serial search visits their subtrees. Reports nodes visited, time and speedup; all must find the same optimum.
// Redis: CPPLESS_REDIS if set, else a private redis-server on a free loopback port.
#include <cppless/cppless.hpp>
#include <cppless/shared.hpp>
#include <cppless/testing/local_redis.hpp>

#include "../common/args.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

struct problem {
  std::vector<std::int64_t> weight, value;  // sorted by decreasing value / weight
  std::int64_t capacity = 0;
  template <class A>
  void serialize(A& ar) {
    ar(weight, value, capacity);
  }
};

// BOTS knapsack-*.input: n, capacity, then n lines "value weight".
problem read_bots(const char* path) {
  std::ifstream in(path);
  std::size_t n = 0;
  problem p;
  if (!(in >> n >> p.capacity)) {
    std::fprintf(stderr, "knapsack: cannot read %s\n", path);
    std::exit(2);
  }
  p.weight.resize(n);
  p.value.resize(n);
  for (std::size_t i = 0; i < n; ++i) in >> p.value[i] >> p.weight[i];
  return p;
}

// Hard random instances: values close to weights (strongly correlated: value = weight + [0,
// spread]), capacity half the total. The smaller the spread, the weaker the bound.
problem generate(std::size_t n, unsigned seed, std::int64_t spread) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> w(20, 120), extra(0, spread);
  problem p;
  for (std::size_t i = 0; i < n; ++i) {
    p.weight.push_back(w(rng));
    p.value.push_back(p.weight.back() + extra(rng));
  }
  p.capacity = std::accumulate(p.weight.begin(), p.weight.end(), std::int64_t{0}) / 2;
  return p;
}

void sort_by_density(problem& p) {
  std::vector<std::size_t> idx(p.weight.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](auto a, auto b) { return p.value[a] * p.weight[b] > p.value[b] * p.weight[a]; });
  problem s{{}, {}, p.capacity};
  for (auto i : idx) {
    s.weight.push_back(p.weight[i]);
    s.value.push_back(p.value[i]);
  }
  p = std::move(s);
}

// The search. A shared bound enters through two hooks: `poll` (called about every
// `poll_every` of search time) and `improved` (called on every local improvement); both may raise
// `best`. Without them this is the serial BOTS search.
struct search {
  explicit search(const problem& problem) : p(problem), chosen(problem.weight.size(), 0) {}
  const problem& p;
  std::int64_t best = 0;
  std::int64_t nodes = 0;
  std::vector<std::uint8_t> chosen, best_chosen;  // item i taken: chosen[i] == 1
  std::chrono::steady_clock::duration poll_every{};
  std::chrono::steady_clock::time_point next_poll{};
  std::function<std::int64_t()> poll;
  std::function<std::int64_t(std::int64_t value, const std::vector<std::uint8_t>& chosen)> improved;

  void run(std::size_t i, std::int64_t room, std::int64_t value) {
    ++nodes;
    if (poll && (nodes & 1023) == 0) {  // the clock is read every 1024 nodes, Redis every poll_every
      auto now = std::chrono::steady_clock::now();
      if (now >= next_poll) {
        best = std::max(best, poll());
        next_poll = now + poll_every;
      }
    }
    if (value > best) {
      best = value;
      best_chosen = chosen;
      if (improved) best = std::max(best, improved(value, chosen));
    }
    if (i == p.weight.size() || room == 0) return;
    // BOTS' bound: fill the remaining room at the density of the best remaining item.
    const double bound = static_cast<double>(value) + static_cast<double>(room) * static_cast<double>(p.value[i]) /
                                                          static_cast<double>(p.weight[i]);
    if (bound <= static_cast<double>(best)) return;
    if (p.weight[i] <= room) {
      chosen[i] = 1;
      run(i + 1, room - p.weight[i], value + p.value[i]);
      chosen[i] = 0;
    }
    run(i + 1, room, value);
  }
};

using shared_best = cppless::shared::best<std::int64_t, std::vector<std::uint8_t>>;

// The prefixes of depth d (decisions on the first d items) in the order the serial search visits
// them: item 0 first, "take" before "leave". Bit i of a prefix: item i taken.
std::vector<std::uint64_t> prefixes_in_search_order(std::size_t depth) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t k = std::uint64_t{1} << depth; k-- > 0;) {
    std::uint64_t prefix = 0;  // k read with item 0 as the most significant bit
    for (std::size_t i = 0; i < depth; ++i)
      if (k >> (depth - 1 - i) & 1) prefix |= std::uint64_t{1} << i;
    out.push_back(prefix);
  }
  return out;
}

// Task `prefix`: searches the subtree below the first `depth` decisions.
// Returns {best value found (0 if none beat the start), nodes visited}.
std::pair<std::int64_t, std::int64_t> solve_subtree(const problem& p, std::uint64_t prefix, std::size_t depth,
                                                    std::chrono::microseconds poll_every, const shared_best* shared) {
  search s(p);
  std::int64_t room = p.capacity, value = 0;
  for (std::size_t i = 0; i < depth; ++i)
    if (prefix >> i & 1) {
      room -= p.weight[i];
      value += p.value[i];
      s.chosen[i] = 1;
    }
  if (room < 0) return {0, 1};
  if (shared != nullptr) {
    s.best = shared->value();
    s.poll_every = poll_every;
    s.next_poll = std::chrono::steady_clock::now() + poll_every;
    s.poll = [shared] { return shared->value(); };
    s.improved = [shared](std::int64_t v, const std::vector<std::uint8_t>& items) {
      return shared->offer(v, items) ? v : shared->value();
    };
  }
  s.run(depth, room, value);
  return {s.best, s.nodes};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const char* input = example::option(argc, argv, "--input", nullptr);
  problem p = input != nullptr ? read_bots(input)
                               : generate(static_cast<std::size_t>(example::option_long(argc, argv, "--items", 68)),
                                          static_cast<unsigned>(example::option_long(argc, argv, "--seed", 1)),
                                          example::option_long(argc, argv, "--spread", 12));
  sort_by_density(p);
  const auto depth = static_cast<std::size_t>(
      std::clamp<long>(example::option_long(argc, argv, "--depth", 8), 0, std::min<long>(20, static_cast<long>(p.weight.size()))));
  const std::chrono::microseconds poll_every(example::option_long(argc, argv, "--refresh-us", 1000));
  cppless::local_options options;
  options.workers = static_cast<unsigned>(example::option_long(argc, argv, "--workers", 0));

  // Redis for the shared bound: the configured one, or a private server for this run.
  std::unique_ptr<cppless::testing::local_redis> own;
  if (std::getenv("CPPLESS_REDIS") == nullptr) own = std::make_unique<cppless::testing::local_redis>();
  auto store = own ? cppless::shared::store::connect(own->url()) : cppless::shared::store::from_env();

  std::printf("knapsack: %zu items, capacity %lld, %d tasks (depth %zu)\n", p.weight.size(),
              static_cast<long long>(p.capacity), static_cast<int>(std::size_t{1} << depth), depth);

  // Serial.
  auto t0 = std::chrono::steady_clock::now();
  search serial(p);
  serial.run(0, p.capacity, 0);
  const double serial_s = seconds_since(t0);

  cppless::local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();
  const std::vector<std::uint64_t> order = prefixes_in_search_order(depth);
  const int tasks = static_cast<int>(order.size());
  // Warm the workers up so both offloaded modes start alike.
  {
    std::vector<int> warm(dispatcher.options().workers == 0 ? 8 : dispatcher.options().workers);
    for (auto& w : warm) cppless::dispatch(instance, [](int x) { return x; }, w, 1);
    cppless::wait(instance, warm.size());
  }

  // Offloaded, each task with its own bound (the thesis' version).
  t0 = std::chrono::steady_clock::now();
  std::vector<std::pair<std::int64_t, std::int64_t>> local(static_cast<std::size_t>(tasks));
  auto local_task = [p, depth](std::uint64_t prefix) { return solve_subtree(p, prefix, depth, {}, nullptr); };
  for (int t = 0; t < tasks; ++t) cppless::dispatch(instance, local_task, local[static_cast<std::size_t>(t)], order[static_cast<std::size_t>(t)]);
  cppless::wait(instance, static_cast<std::size_t>(tasks));
  const double local_s = seconds_since(t0);

  // Offloaded with the shared bound.
  auto best = store.best<std::int64_t, std::vector<std::uint8_t>>("best", cppless::shared::maximize);
  auto visited = store.counter("visited");
  t0 = std::chrono::steady_clock::now();
  std::vector<std::pair<std::int64_t, std::int64_t>> shared(static_cast<std::size_t>(tasks));
  auto shared_task = [p, depth, poll_every, best, visited](std::uint64_t prefix) {
    auto r = solve_subtree(p, prefix, depth, poll_every, &best);
    visited.add(r.second);
    return r;
  };
  for (int t = 0; t < tasks; ++t)
    cppless::dispatch(instance, shared_task, shared[static_cast<std::size_t>(t)], order[static_cast<std::size_t>(t)]);
  cppless::wait(instance, static_cast<std::size_t>(tasks));
  const double shared_s = seconds_since(t0);

  auto sum_nodes = [](const auto& v) {
    std::int64_t n = 0;
    for (auto& r : v) n += r.second;
    return n;
  };
  auto max_best = [](const auto& v) {
    std::int64_t b = 0;
    for (auto& r : v) b = std::max(b, r.first);
    return b;
  };
  const std::int64_t local_nodes = sum_nodes(local), shared_nodes = sum_nodes(shared);
  const auto snapshot = best.get();
  std::printf("%-26s %12s %14s %10s %9s\n", "mode", "best value", "nodes", "time s", "speedup");
  std::printf("%-26s %12lld %14lld %10.3f %9s\n", "serial", static_cast<long long>(serial.best),
              static_cast<long long>(serial.nodes), serial_s, "1.00x");
  std::printf("%-26s %12lld %14lld %10.3f %8.2fx\n", "offloaded, local bounds", static_cast<long long>(max_best(local)),
              static_cast<long long>(local_nodes), local_s, serial_s / local_s);
  std::printf("%-26s %12lld %14lld %10.3f %8.2fx\n", "offloaded, shared bound", static_cast<long long>(snapshot.value),
              static_cast<long long>(shared_nodes), shared_s, serial_s / shared_s);
  std::printf("workers: %u; shared counter 'visited' = %lld; redis %s, namespace %s\n", dispatcher.worker_count(),
              static_cast<long long>(visited.get()), store.where().to_string().c_str(), store.ns().c_str());
  std::printf("{\"suite\":\"knapsack\",\"items\":%zu,\"tasks\":%d,\"workers\":%u,\"serial_nodes\":%lld,\"serial_s\":%.4f,"
              "\"local_nodes\":%lld,\"local_s\":%.4f,\"shared_nodes\":%lld,\"shared_s\":%.4f}\n",
              p.weight.size(), tasks, dispatcher.worker_count(), static_cast<long long>(serial.nodes), serial_s,
              static_cast<long long>(local_nodes), local_s, static_cast<long long>(shared_nodes), shared_s);

  // The shared solution must really achieve its value within the capacity.
  std::int64_t w = 0, v = 0;
  for (std::size_t i = 0; i < p.weight.size(); ++i)
    if (snapshot.payload && i < snapshot.payload->size() && (*snapshot.payload)[i] == 1) {
      w += p.weight[i];
      v += p.value[i];
    }
  store.remove_namespace();
  const bool ok = max_best(local) == serial.best && snapshot.value == serial.best && v == serial.best && w <= p.capacity;
  if (!ok) std::printf("MISMATCH: the modes disagree on the optimum\n");
  return ok ? 0 : 1;
}
