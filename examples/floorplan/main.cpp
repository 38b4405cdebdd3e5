// Floorplan by branch and bound (the BOTS algorithm), offloaded to local workers with and without
// a shared bound. Cells are laid down one by one, each touching the cell given as its left or above
// neighbour, in one of its alternative shapes (rows x cols), without overlapping the cells already
// down; the goal is the smallest bounding box (footprint rows x cols, from the board's corner). A
// branch is cut when its footprint's area is already >= the best complete area found so far. The
// thesis (5.3) offloaded this with each task pruning on its own and measured a speedup of about 8
// from ~500 Lambda tasks; here every task can read a shared best<> (Crucial's design, in Redis).
//
//   floorplan_example [--input inputs/input.15] [--depth 4] [--refresh-us 1000] [--workers 0] [--hot-poll-us 200]
//                     [--show 0]
//
// Inputs (examples/floorplan/inputs/, BOTS' own files, see inputs/README.md): number of cells,
// then per cell: number of shapes, one "rows cols" pair per shape, "left above" (neighbour cell ids,
// -1 for none, 0 for the board's left edge) and the next cell to lay down (0 after the last); then
// the minimum area BOTS verifies against, checked here too. As in BOTS, the board is 64 x 64 and
// the initial bound is its area (a placement leaving the board is refused: BOTS leaves it undefined).
//
// Modes: serial (one process), offloaded/local-bound (each task prunes with the initial bound and
// its own best only, as in the thesis), offloaded/shared-bound (tasks read the shared best every
// --refresh-us of search and offer each improvement). Tasks are the partial floorplans of the
// first --depth cells, expanded on the host and dispatched in the order the serial search visits
// them. Nodes are placements tried (BOTS' task count); the offloaded counts include the host's
// expansion. All modes must find the same minimum area, and BOTS' answer when the input has it.
// Redis: CPPLESS_REDIS if set, else a private redis-server on a free loopback port.
#include <cppless/cppless.hpp>
#include <cppless/shared.hpp>
#include <cppless/testing/local_redis.hpp>

#include "../common/args.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#ifndef FLOORPLAN_INPUTS
#define FLOORPLAN_INPUTS "inputs"
#endif

namespace {

constexpr std::int32_t board_side = 64;                                    // BOTS' ROWS and COLS
constexpr std::int64_t initial_bound = std::int64_t{board_side} * board_side;  // BOTS' MIN_AREA at start

struct cell {
  std::vector<std::int32_t> rows, cols;  // the alternative shapes
  std::int32_t left = -1, above = -1;    // the cells it must touch (-1: none)
  template <class A>
  void serialize(A& ar) {
    ar(rows, cols, left, above);
  }
};

struct problem {
  std::vector<cell> cells;           // cells[0]: the board's left edge (BOTS' cell 0)
  std::vector<std::int32_t> order;   // the cell ids in the order they are laid down
  std::int64_t known = -1;           // the minimum area given by the input file, -1 if none
  template <class A>
  void serialize(A& ar) {
    ar(cells, order, known);
  }
};

[[noreturn]] void bad_input(const char* path, const std::string& why) {
  std::fprintf(stderr, "floorplan: %s: %s\n", path, why.c_str());
  std::exit(2);
}

problem read_bots(const char* path) {
  std::ifstream in(path);
  if (!in) bad_input(path, "cannot open");
  auto next_int = [&](const char* what) {
    long v = 0;
    if (!(in >> v)) bad_input(path, std::string("expected ") + what);
    return v;
  };
  const long n = next_int("the number of cells");
  if (n < 1 || n > 64) bad_input(path, "the number of cells must be 1..64");
  problem p;
  p.cells.resize(static_cast<std::size_t>(n) + 1);
  std::vector<std::int32_t> next(static_cast<std::size_t>(n) + 1, 0);
  for (std::size_t i = 1; i <= static_cast<std::size_t>(n); ++i) {
    cell& c = p.cells[i];
    const long shapes = next_int("a number of shapes");
    if (shapes < 1 || shapes > 64) bad_input(path, "cell " + std::to_string(i) + ": 1..64 shapes");
    for (long s = 0; s < shapes; ++s) {
      const long r = next_int("rows"), k = next_int("cols");
      if (r < 1 || k < 1 || r > board_side || k > board_side)
        bad_input(path, "cell " + std::to_string(i) + ": a shape must fit the 64 x 64 board");
      c.rows.push_back(static_cast<std::int32_t>(r));
      c.cols.push_back(static_cast<std::int32_t>(k));
    }
    const long left = next_int("left"), above = next_int("above"), nx = next_int("next");
    if (left < -1 || left > n || above < -1 || above > n || (left < 0 && above < 0) || nx < 0 || nx > n)
      bad_input(path, "cell " + std::to_string(i) + ": bad left/above/next");
    c.left = static_cast<std::int32_t>(left);
    c.above = static_cast<std::int32_t>(above);
    next[i] = static_cast<std::int32_t>(nx);
  }
  long known = 0;
  if (in >> known) p.known = known;
  // The order of laying down: from cell 1 along `next`; every cell once, each neighbour before.
  std::vector<bool> down(static_cast<std::size_t>(n) + 1, false);
  down[0] = true;
  for (std::int32_t id = 1; id != 0; id = next[static_cast<std::size_t>(id)]) {
    const cell& c = p.cells[static_cast<std::size_t>(id)];
    if (down[static_cast<std::size_t>(id)]) bad_input(path, "the next chain loops");
    if ((c.left >= 0 && !down[static_cast<std::size_t>(c.left)]) || (c.above >= 0 && !down[static_cast<std::size_t>(c.above)]))
      bad_input(path, "cell " + std::to_string(id) + " touches a cell laid down after it");
    down[static_cast<std::size_t>(id)] = true;
    p.order.push_back(id);
  }
  if (p.order.size() != static_cast<std::size_t>(n)) bad_input(path, "the next chain misses some cells");
  return p;
}

struct rect {
  std::int32_t top = 0, bot = 0, lhs = 0, rhs = 0;  // inclusive
};

bool overlap(const rect& a, const rect& b) {
  return a.top <= b.bot && b.top <= a.bot && a.lhs <= b.rhs && b.lhs <= a.rhs;
}

// The north-west corners where shape `s` of cell `id` may go, given where its neighbours are
// (BOTS' starts()): below the cell above and/or right of the cell to the left, touching it.
template <class F>
void for_each_start(const cell& c, const std::vector<rect>& at, std::size_t s, F&& f) {
  const std::int32_t rows = c.rows[s], cols = c.cols[s];
  if (c.left >= 0 && c.above >= 0) {
    const rect& l = at[static_cast<std::size_t>(c.left)];
    const rect& a = at[static_cast<std::size_t>(c.above)];
    const std::int32_t top = a.bot + 1, lhs = l.rhs + 1;
    if (top <= l.bot && top + rows >= l.top && lhs <= a.rhs && lhs + cols >= a.lhs) f(top, lhs);
  } else if (c.left >= 0) {
    const rect& l = at[static_cast<std::size_t>(c.left)];
    for (std::int32_t top = std::max(l.top - rows + 1, 0); top <= std::min(l.bot, board_side); ++top) f(top, l.rhs + 1);
  } else {
    const rect& a = at[static_cast<std::size_t>(c.above)];
    for (std::int32_t lhs = std::max(a.lhs - cols + 1, 0); lhs <= std::min(a.rhs, board_side); ++lhs) f(a.bot + 1, lhs);
  }
}

using layout = std::vector<std::int32_t>;  // per cell, in laying-down order: shape, top, lhs

// A partial floorplan: the first cells of the order laid down, and their footprint.
struct prefix {
  layout placed;
  std::int32_t rows = 0, cols = 0;
  template <class A>
  void serialize(A& ar) {
    ar(placed, rows, cols);
  }
};

// The search. A shared bound enters through two hooks: `poll` (called about every `poll_every`
// of search time) and `improved` (called on every local improvement); both may lower `best`.
// With `collect` set, the search stops at cell `stop` of the order and records the partial
// floorplans there instead (the host's expansion). Without them this is the serial BOTS search.
struct search {
  explicit search(const problem& problem)
      : p(problem), at(problem.cells.size(), rect{0, 0, -1, -1}), placed(3 * problem.order.size(), 0) {}
  const problem& p;
  std::vector<rect> at;  // by cell id; cells[0] is the left edge: rows 0..0, column -1
  layout placed, best_placed;
  std::int64_t best = initial_bound;
  std::int64_t nodes = 0;
  std::size_t stop = std::numeric_limits<std::size_t>::max();
  std::vector<prefix>* collect = nullptr;
  std::chrono::steady_clock::duration poll_every{};
  std::chrono::steady_clock::time_point next_poll{};
  std::function<std::int64_t()> poll;
  std::function<std::int64_t(std::int64_t area, const layout& placed)> improved;

  // Lays down cell order[k] in every shape and position, the footprint so far being rows x cols.
  void run(std::size_t k, std::int32_t rows, std::int32_t cols) {
    if (k == stop) {
      collect->push_back({layout(placed.begin(), placed.begin() + static_cast<std::ptrdiff_t>(3 * k)), rows, cols});
      return;
    }
    const auto id = static_cast<std::size_t>(p.order[k]);
    const cell& c = p.cells[id];
    const bool last = k + 1 == p.order.size();
    for (std::size_t s = 0; s < c.rows.size(); ++s) {
      for_each_start(c, at, s, [&](std::int32_t top, std::int32_t lhs) {
        ++nodes;
        if (poll && (nodes & 1023) == 0) {  // the clock every 1024 nodes, Redis every poll_every
          auto now = std::chrono::steady_clock::now();
          if (now >= next_poll) {
            best = std::min(best, poll());
            next_poll = now + poll_every;
          }
        }
        const rect r{top, top + c.rows[s] - 1, lhs, lhs + c.cols[s] - 1};
        if (r.bot >= board_side || r.rhs >= board_side) return;
        for (std::size_t j = 0; j < k; ++j)  // BOTS' lay_down: the space must be free
          if (overlap(r, at[static_cast<std::size_t>(p.order[j])])) return;
        const std::int32_t nrows = std::max(rows, r.bot + 1), ncols = std::max(cols, r.rhs + 1);
        const std::int64_t area = std::int64_t{nrows} * ncols;
        if (area >= best) return;  // BOTS' bound: this footprint is already no better
        at[id] = r;
        placed[3 * k] = static_cast<std::int32_t>(s);
        placed[3 * k + 1] = top;
        placed[3 * k + 2] = lhs;
        if (!last) {
          run(k + 1, nrows, ncols);
          return;
        }
        best = area;
        best_placed = placed;
        if (improved) best = std::min(best, improved(area, placed));
      });
    }
  }
};

using shared_best = cppless::shared::best<std::int64_t, layout>;

// The partial floorplans of the first `depth` cells, in the order the serial search visits them
// (pruned only by the initial bound, as the host knows no better one), and the nodes this took.
std::pair<std::vector<prefix>, std::int64_t> expand(const problem& p, std::size_t depth) {
  std::vector<prefix> out;
  search s(p);
  s.stop = depth;
  s.collect = &out;
  s.run(0, 0, 0);
  return {std::move(out), s.nodes};
}

// Task: searches below one partial floorplan. Returns {best area found (the initial bound if
// none beat the start), nodes visited}.
std::pair<std::int64_t, std::int64_t> solve_subtree(const problem& p, const prefix& pre, std::chrono::microseconds poll_every,
                                                    const shared_best* shared) {
  search s(p);
  const std::size_t depth = pre.placed.size() / 3;
  for (std::size_t k = 0; k < depth; ++k) {
    const auto id = static_cast<std::size_t>(p.order[k]);
    const auto shape = static_cast<std::size_t>(pre.placed[3 * k]);
    const std::int32_t top = pre.placed[3 * k + 1], lhs = pre.placed[3 * k + 2];
    s.at[id] = rect{top, top + p.cells[id].rows[shape] - 1, lhs, lhs + p.cells[id].cols[shape] - 1};
    for (std::size_t j = 0; j < 3; ++j) s.placed[3 * k + j] = pre.placed[3 * k + j];
  }
  if (shared != nullptr) {
    s.best = std::min(s.best, shared->value());
    s.poll_every = poll_every;
    s.next_poll = std::chrono::steady_clock::now() + poll_every;
    s.poll = [shared] { return shared->value(); };
    s.improved = [shared](std::int64_t area, const layout& placed) {
      return shared->offer(area, placed) ? area : shared->value();
    };
  }
  s.run(depth, pre.rows, pre.cols);
  return {s.best, s.nodes};
}

// The area of a complete layout if it is a legal floorplan of `p` (every cell in one of its
// shapes, at one of the positions BOTS' rules allow, no overlap, on the board), else -1.
std::int64_t check_layout(const problem& p, const layout& placed, std::vector<rect>* out = nullptr) {
  if (placed.size() != 3 * p.order.size()) return -1;
  std::vector<rect> at(p.cells.size(), rect{0, 0, -1, -1});
  std::int32_t rows = 0, cols = 0;
  for (std::size_t k = 0; k < p.order.size(); ++k) {
    const auto id = static_cast<std::size_t>(p.order[k]);
    const cell& c = p.cells[id];
    const std::int32_t s = placed[3 * k], top = placed[3 * k + 1], lhs = placed[3 * k + 2];
    if (s < 0 || static_cast<std::size_t>(s) >= c.rows.size()) return -1;
    bool allowed = false;
    for_each_start(c, at, static_cast<std::size_t>(s),
                   [&](std::int32_t t, std::int32_t l) { allowed = allowed || (t == top && l == lhs); });
    const rect r{top, top + c.rows[static_cast<std::size_t>(s)] - 1, lhs, lhs + c.cols[static_cast<std::size_t>(s)] - 1};
    if (!allowed || r.bot >= board_side || r.rhs >= board_side) return -1;
    for (std::size_t j = 0; j < k; ++j)
      if (overlap(r, at[static_cast<std::size_t>(p.order[j])])) return -1;
    at[id] = r;
    rows = std::max(rows, r.bot + 1);
    cols = std::max(cols, r.rhs + 1);
  }
  if (out != nullptr) *out = at;
  return std::int64_t{rows} * cols;
}

// BOTS' picture of a floorplan: cell i drawn as the letter 'A' + i - 1.
void show(const problem& p, const layout& placed) {
  std::vector<rect> at;
  if (check_layout(p, placed, &at) < 0) return;
  std::int32_t rows = 0, cols = 0;
  for (auto id : p.order) {
    rows = std::max(rows, at[static_cast<std::size_t>(id)].bot + 1);
    cols = std::max(cols, at[static_cast<std::size_t>(id)].rhs + 1);
  }
  std::vector<std::string> picture(static_cast<std::size_t>(rows), std::string(static_cast<std::size_t>(cols), '.'));
  for (auto id : p.order) {
    const rect& r = at[static_cast<std::size_t>(id)];
    for (auto i = r.top; i <= r.bot; ++i)
      for (auto j = r.lhs; j <= r.rhs; ++j)
        picture[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = static_cast<char>('A' + id - 1);
  }
  for (auto& line : picture) std::printf("  %s\n", line.c_str());
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const char* input = example::option(argc, argv, "--input", FLOORPLAN_INPUTS "/input.15");
  const problem p = read_bots(input);
  const auto depth = static_cast<std::size_t>(
      std::clamp<long>(example::option_long(argc, argv, "--depth", 4), 0, static_cast<long>(p.order.size()) - 1));
  const std::chrono::microseconds poll_every(example::option_long(argc, argv, "--refresh-us", 1000));
  const bool draw = example::option_long(argc, argv, "--show", 0) != 0;
  cppless::local_options options;
  options.workers = static_cast<unsigned>(example::option_long(argc, argv, "--workers", 0));
  options.hot_poll = std::chrono::microseconds(example::option_long(argc, argv, "--hot-poll-us", options.hot_poll.count()));

  // Redis for the shared bound: the configured one, or a private server for this run.
  std::unique_ptr<cppless::testing::local_redis> own;
  if (std::getenv("CPPLESS_REDIS") == nullptr) own = std::make_unique<cppless::testing::local_redis>();
  auto store = own ? cppless::shared::store::connect(own->url()) : cppless::shared::store::from_env();

  // Serial.
  auto t0 = std::chrono::steady_clock::now();
  search serial(p);
  serial.run(0, 0, 0);
  const double serial_s = seconds_since(t0);

  // The tasks: partial floorplans of the first `depth` cells, expanded on the host (timed with
  // each offloaded mode below, as part of its work).
  t0 = std::chrono::steady_clock::now();
  const auto [prefixes, host_nodes] = expand(p, depth);
  const double expand_s = seconds_since(t0);
  const int tasks = static_cast<int>(prefixes.size());
  std::printf("floorplan: %s, %zu cells, %d tasks (depth %zu; the host's expansion visits %lld nodes)\n", input,
              p.order.size(), tasks, depth, static_cast<long long>(host_nodes));

  cppless::local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();
  // Warm the workers up so both offloaded modes start alike.
  {
    std::vector<int> warm(dispatcher.options().workers == 0 ? 8 : dispatcher.options().workers);
    for (auto& w : warm) cppless::dispatch(instance, [](int x) { return x; }, w, 1);
    cppless::wait(instance, warm.size());
  }

  // Offloaded, each task with its own bound (the thesis' version).
  t0 = std::chrono::steady_clock::now();
  std::vector<std::pair<std::int64_t, std::int64_t>> local(static_cast<std::size_t>(tasks));
  auto local_task = [p](const prefix& pre) { return solve_subtree(p, pre, {}, nullptr); };
  for (int t = 0; t < tasks; ++t)
    cppless::dispatch(instance, local_task, local[static_cast<std::size_t>(t)], prefixes[static_cast<std::size_t>(t)]);
  cppless::wait(instance, static_cast<std::size_t>(tasks));
  const double local_s = seconds_since(t0) + expand_s;

  // Offloaded with the shared bound.
  auto best = store.best<std::int64_t, layout>("best", cppless::shared::minimize);
  auto visited = store.counter("visited");
  t0 = std::chrono::steady_clock::now();
  std::vector<std::pair<std::int64_t, std::int64_t>> shared(static_cast<std::size_t>(tasks));
  auto shared_task = [p, poll_every, best, visited](const prefix& pre) {
    auto r = solve_subtree(p, pre, poll_every, &best);
    visited.add(r.second);
    return r;
  };
  for (int t = 0; t < tasks; ++t)
    cppless::dispatch(instance, shared_task, shared[static_cast<std::size_t>(t)], prefixes[static_cast<std::size_t>(t)]);
  cppless::wait(instance, static_cast<std::size_t>(tasks));
  const double shared_s = seconds_since(t0) + expand_s;

  auto sum_nodes = [&](const auto& v) {
    std::int64_t n = host_nodes;
    for (auto& r : v) n += r.second;
    return n;
  };
  auto min_area = [](const auto& v) {
    std::int64_t b = initial_bound;
    for (auto& r : v) b = std::min(b, r.first);
    return b;
  };
  const std::int64_t local_nodes = sum_nodes(local), shared_nodes = sum_nodes(shared);
  const auto snapshot = best.get();
  std::printf("%-26s %12s %14s %10s %9s\n", "mode", "min area", "nodes", "time s", "speedup");
  std::printf("%-26s %12lld %14lld %10.3f %9s\n", "serial", static_cast<long long>(serial.best),
              static_cast<long long>(serial.nodes), serial_s, "1.00x");
  std::printf("%-26s %12lld %14lld %10.3f %8.2fx\n", "offloaded, local bounds", static_cast<long long>(min_area(local)),
              static_cast<long long>(local_nodes), local_s, serial_s / local_s);
  std::printf("%-26s %12lld %14lld %10.3f %8.2fx\n", "offloaded, shared bound", static_cast<long long>(snapshot.value),
              static_cast<long long>(shared_nodes), shared_s, serial_s / shared_s);
  std::printf("workers: %u; shared counter 'visited' = %lld (+ %lld on the host); redis %s, namespace %s\n",
              dispatcher.worker_count(), static_cast<long long>(visited.get()), static_cast<long long>(host_nodes),
              store.where().to_string().c_str(), store.ns().c_str());
  std::printf("{\"suite\":\"floorplan\",\"cells\":%zu,\"depth\":%zu,\"tasks\":%d,\"workers\":%u,\"min_area\":%lld,"
              "\"serial_nodes\":%lld,\"serial_s\":%.4f,\"local_nodes\":%lld,\"local_s\":%.4f,\"shared_nodes\":%lld,"
              "\"shared_s\":%.4f}\n",
              p.order.size(), depth, tasks, dispatcher.worker_count(), static_cast<long long>(serial.best),
              static_cast<long long>(serial.nodes), serial_s, static_cast<long long>(local_nodes), local_s,
              static_cast<long long>(shared_nodes), shared_s);

  // The shared solution must be a legal floorplan with the area it claims.
  const std::int64_t shared_area = snapshot.payload ? check_layout(p, *snapshot.payload) : -1;
  if (draw && snapshot.payload) show(p, *snapshot.payload);
  store.remove_namespace();
  bool ok = serial.best < initial_bound && check_layout(p, serial.best_placed) == serial.best &&
            min_area(local) == serial.best && snapshot.value == serial.best && shared_area == serial.best;
  if (serial.best == initial_bound) std::printf("no floorplan of this input fits the 64 x 64 board\n");
  else if (!ok) std::printf("MISMATCH: the modes disagree on the minimum area\n");
  if (p.known >= 0 && serial.best != p.known) {
    std::printf("WRONG: BOTS gives %lld as the minimum area of this input\n", static_cast<long long>(p.known));
    ok = false;
  } else if (p.known >= 0) {
    std::printf("minimum area %lld, as BOTS gives for this input\n", static_cast<long long>(p.known));
  }
  return ok ? 0 : 1;
}
