// cppless/cloud_thread.hpp — Crucial's programming model over cppless dispatch: a cloud thread
// (start a function, join it) and fork-join helpers (invoke_all, parallel_for), for code written
// like multi-threaded C++ whose threads share state through shared objects (cppless/shared.hpp).
// Needs only dispatch, not Redis.
//
//   auto hits = store.counter("hits");
//   cppless::parallel_for(instance, 0, n, 64, [hits](std::int64_t i) { if (inside(i)) hits.add(1); });
//
// Each is a thin layer over cppless::async: the functions run wherever the instance sends them
// (local workers, AWS Lambda, leased executors), and a remote failure is rethrown by join()/get.
#pragma once

#include <cppless/capture.hpp>
#include <cppless/config.hpp>
#include <cppless/error.hpp>
#include <cppless/dispatch.hpp>
#include <cppless/instance.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

namespace cppless {

// A function running remotely, joined like a std::thread (Crucial's CloudThread). The destructor
// joins too (as std::jthread), discarding a failure nobody asked for: call join() to see it.
class cloud_thread {
 public:
  cloud_thread() = default;
  template <class F, class... Args>
    requires(!std::is_same_v<std::decay_t<F>, cloud_thread>)
  cloud_thread(cppless::instance& inst, F&& fn, Args&&... args) {
    *this = start<cppless::default_config>(inst, std::forward<F>(fn), std::forward<Args>(args)...);
  }
  // With a function config (memory, timeout...): cloud_thread::start<config>(instance, fn, args...).
  template <class Config, class F, class... Args>
  static cloud_thread start(cppless::instance& inst, F&& fn, Args&&... args) {
    auto call = std::make_shared<decltype(cppless::async<Config>(inst, std::forward<F>(fn), std::forward<Args>(args)...))>(
        cppless::async<Config>(inst, std::forward<F>(fn), std::forward<Args>(args)...));
    cloud_thread t;
    t.join_ = [call] { (void)call->get(); };
    return t;
  }
  // Crucial's retries: a function that fails (throws, crashes, times out) is started again, up
  // to `retries` more times; join() rethrows only the last failure. A retried function runs its
  // effects on shared objects again: give it effects that tolerate that (idempotent, or undone).
  template <class Config = cppless::default_config, class F, class... Args>
  static cloud_thread start_with_retries(cppless::instance& inst, int retries, F fn, Args... args) {
    if (retries < 0) throw cppless::error("cppless::cloud_thread: retries must be >= 0 (got " + std::to_string(retries) + ")");
    auto launch = [&inst, fn, args...] { return cppless::async<Config>(inst, fn, args...); };
    auto call = std::make_shared<decltype(launch())>(launch());
    auto attempts = std::make_shared<int>(1);
    cloud_thread t;
    t.attempts_ = attempts;
    t.join_ = [launch, call, attempts, retries]() mutable {
      for (int left = retries;; --left) {
        try {
          (void)call->get();
          return;
        } catch (...) {
          if (left == 0) throw;
        }
        call = std::make_shared<decltype(launch())>(launch());
        ++*attempts;
      }
    };
    return t;
  }
  cloud_thread(cloud_thread&&) noexcept = default;
  cloud_thread& operator=(cloud_thread&& other) noexcept {
    if (this != &other) {
      finish_quietly();
      join_ = std::move(other.join_);
      attempts_ = std::move(other.attempts_);
    }
    return *this;
  }
  ~cloud_thread() { finish_quietly(); }

  [[nodiscard]] bool joinable() const noexcept { return static_cast<bool>(join_); }
  // How many times the function was started (1, or more after retries).
  [[nodiscard]] int attempts() const noexcept { return attempts_ ? *attempts_ : 1; }
  // Waits for the function; rethrows its failure (cppless::remote_error, worker_crashed...).
  void join() {
    auto j = std::move(join_);
    join_ = nullptr;
    if (j) j();
  }

 private:
  void finish_quietly() noexcept {
    try {
      join();
    } catch (...) {
      // A destructor must not throw; join() explicitly to see the failure.
    }
  }
  std::function<void()> join_;
  std::shared_ptr<int> attempts_;
};

// Runs every task (callables of one type, e.g. one lambda with different captures) remotely and
// returns their results in order (Crucial's invokeAll). The first failure is rethrown after all
// tasks ended.
template <class Config = cppless::default_config, class F>
auto invoke_all(cppless::instance& inst, const std::vector<F>& tasks) {
  using R = std::decay_t<std::invoke_result_t<const F&>>;
  std::vector<cppless::future<R>> calls;
  calls.reserve(tasks.size());
  for (const F& t : tasks) calls.push_back(cppless::async<Config>(inst, t));
  std::exception_ptr first;
  if constexpr (std::is_void_v<R>) {
    for (auto& c : calls) {
      try {
        c.get();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  } else {
    std::vector<R> results;
    results.reserve(tasks.size());
    for (auto& c : calls) {
      try {
        results.push_back(c.get());
      } catch (...) {
        if (!first) first = std::current_exception();
        results.emplace_back();
      }
    }
    if (first) std::rethrow_exception(first);
    return results;
  }
}

namespace detail {

// body(i) for i in [lo, hi): the function parallel_for sends. It carries the user's closure the
// way dispatch carries any closure (capture.hpp), so the closure's captures travel by value.
template <class F>
class range_task {
 public:
  range_task() = default;
  explicit range_task(const F& body) : body_(new (&storage_) F(body)) {}
  range_task(const range_task& other) : body_(other.body_ ? new (&storage_) F(*other.body_) : nullptr) {}
  range_task& operator=(const range_task&) = delete;
  ~range_task() {
    if (body_) std::destroy_at(body_);
  }

  void operator()(std::int64_t lo, std::int64_t hi) const {
    for (std::int64_t i = lo; i < hi; ++i) (*body_)(i);
  }

  template <class Archive>
  void serialize(Archive& ar) {
    if constexpr (std::is_same_v<Archive, cppless::output_archive>) {
      cppless::detail::save_closure(ar, *body_);
    } else {
      if (body_) std::destroy_at(std::exchange(body_, nullptr));
      body_ = cppless::detail::load_closure<F>(ar, &storage_);
    }
  }

 private:
  alignas(F) std::byte storage_[sizeof(F)];
  F* body_ = nullptr;
};

}  // namespace detail

// body(i) for every i in [begin, end), split into `tasks` contiguous ranges run as `tasks`
// functions (Crucial's invokeIterativeTask: static scheduling). body must be callable as
// body(std::int64_t) and const; it shares results through shared objects it captures.
template <class Config = cppless::default_config, class F>
void parallel_for(cppless::instance& inst, std::int64_t begin, std::int64_t end, int tasks, const F& body) {
  if (end <= begin) return;
  const std::int64_t n = end - begin;
  const std::int64_t parts = std::clamp<std::int64_t>(tasks, 1, n);
  std::vector<cppless::future<void>> calls;
  calls.reserve(static_cast<std::size_t>(parts));
  const detail::range_task<F> task(body);
  for (std::int64_t p = 0; p < parts; ++p) {
    const std::int64_t lo = begin + n * p / parts, hi = begin + n * (p + 1) / parts;
    calls.push_back(cppless::async<Config>(inst, task, lo, hi));
  }
  std::exception_ptr first;
  for (auto& c : calls) {
    try {
      c.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace cppless
