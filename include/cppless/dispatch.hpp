// cppless/dispatch.hpp — the user-facing calls: dispatch, wait, async and future.
//
//   int id = cppless::dispatch<config>(instance, fn, result, args...);  // fn(args...) -> result
//   cppless::dispatch(instance, void_fn, args...);                      // no result
//   cppless::wait(instance, n);                  // n calls ended; rethrows the first failure
//   cppless::future<int> f = cppless::async(instance, fn, args...);    // f.get()
//
// Instantiating dispatch/async with a callable registers it as an entry (see entry.hpp), so the
// same executable can run it as a worker; the callable and the arguments are serialized (see
// capture.hpp and archive.hpp), the result is decoded into the caller's storage.
#pragma once

#include <cppless/archive.hpp>
#include <cppless/config.hpp>
#include <cppless/entry.hpp>
#include <cppless/error.hpp>
#include <cppless/instance.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <variant>
#include <utility>

namespace cppless {

namespace detail {

template <class Config, class F, class... Args>
invocation make_invocation(const F& fn, const Args&... args) {
  using entry_type = function_entry<Config, F, std::decay_t<Args>...>;
  (void)entry_type::registration;  // registers the entry at start-up in every process
  const entry& e = entry_type::get();
  invocation call;
  call.function_id = e.id_hash;
  call.fingerprint = e.fingerprint;
  call.function_name = e.name.c_str();
  call.config = e.config;
  output_archive ar(call.payload);
  save_closure(ar, fn);
  if constexpr (sizeof...(Args) > 0) ar(args...);
  return call;
}

template <class R>
void decode_result(std::span<const std::byte> bytes, R& into) {
  input_archive in(bytes.data(), bytes.size());
  in(into);
  in.expect_end();
}

// True when fn(args...) is a call returning void (then there is no result reference).
template <class Fn, class... Args>
constexpr bool is_void_call() {
  if constexpr (std::is_invocable_v<Fn&, Args&&...>) return std::is_void_v<std::invoke_result_t<Fn&, Args&&...>>;
  else return false;
}

template <class F, class... Args>
using call_result_t = std::decay_t<std::invoke_result_t<std::decay_t<F>&, std::decay_t<Args>&&...>>;

}  // namespace detail

// Dispatches fn(args...) and writes its result into `result` once wait_one()/wait() returned
// the call's id. For a callable returning void, every argument after fn goes to fn.
template <class Config = default_config, class F, class... Rest>
std::int64_t dispatch(instance& inst, F&& fn, Rest&&... rest) {
  using Fn = std::decay_t<F>;
  if constexpr (detail::is_void_call<Fn, std::decay_t<Rest>...>()) {
    return inst.submit(detail::make_invocation<Config, Fn>(fn, rest...), [](std::span<const std::byte> bytes) {
      if (!bytes.empty()) throw decode_error("unexpected result bytes for a void function");
    });
  } else {
    return [&]<class R, class... Args>(R& result, Args&&... args) {
      static_assert(!std::is_const_v<R>, "cppless::dispatch: the result reference must be writable");
      using produced = detail::call_result_t<Fn, Args...>;
      static_assert(std::is_assignable_v<R&, produced&&>,
                    "cppless::dispatch: the result reference cannot hold what the function returns");
      return inst.submit(detail::make_invocation<Config, Fn>(fn, args...), [&result](std::span<const std::byte> bytes) {
        if constexpr (std::is_same_v<R, produced>) {
          detail::decode_result(bytes, result);
        } else {
          produced value{};
          detail::decode_result(bytes, value);
          result = std::move(value);
        }
      });
    }(rest...);
  }
}

// Waits until n dispatched calls have ended. If any failed, rethrows the first failure after
// all n have ended, so nothing is left half-waited.
void wait(instance& inst, std::size_t n);

// The typed result of cppless::async. get() drives the instance until the call has ended.
template <class T>
class future {
 public:
  future() = default;

  bool valid() const { return state_ != nullptr; }
  bool ready() const { return state_ && state_->done; }

  T get() {
    wait();
    auto state = std::move(state_);
    if (state->error) std::rethrow_exception(state->error);
    if constexpr (!std::is_void_v<T>) return std::move(*state->value);
  }

  void wait() {
    if (!state_) throw error("cppless::future: no state (default-constructed or already consumed)");
    if (!state_->done) owner_.drive_until([s = state_.get()] { return s->done; });
  }

  // Internal: created by async().
  struct shared_state {
    bool done = false;
    std::exception_ptr error;
    std::conditional_t<std::is_void_v<T>, std::monostate, std::optional<T>> value;
    call_stats stats;
  };
  future(instance owner, std::shared_ptr<shared_state> state) : owner_(std::move(owner)), state_(std::move(state)) {}
  const call_stats& stats() const { return state_->stats; }

 private:
  instance owner_;
  std::shared_ptr<shared_state> state_;
};

// Runs fn(args...) remotely; the future holds its result or its error.
template <class Config = default_config, class F, class... Args>
auto async(instance& inst, F&& fn, Args&&... args) -> future<detail::call_result_t<F, Args...>> {
  using T = detail::call_result_t<F, Args...>;
  using state_type = typename future<T>::shared_state;
  auto state = std::make_shared<state_type>();
  inst.submit_detached(detail::make_invocation<Config, std::decay_t<F>>(fn, args...), [state](outcome&& done) {
    state->stats = std::move(done.stats);
    state->error = done.error;
    if (!state->error) {
      try {
        if constexpr (std::is_void_v<T>) {
          if (!done.result.empty()) throw decode_error("unexpected result bytes for a void function");
        } else {
          T value{};
          detail::decode_result(done.result.span(), value);
          state->value.emplace(std::move(value));
        }
      } catch (...) {
        state->error = std::current_exception();
      }
    }
    state->done = true;
  });
  return future<T>(inst, std::move(state));
}

}  // namespace cppless
