// Instances: call ids, the queue of ended calls behind wait_one(), and wait().
#include <cppless/dispatch.hpp>
#include <cppless/error.hpp>
#include <cppless/instance.hpp>
#include <cppless/trace.hpp>

#include <deque>
#include <thread>

namespace cppless {

namespace detail {
struct instance_state {
  std::shared_ptr<backend> owner;
  std::int64_t next_id = 0;
  std::size_t pending = 0;  // dispatched, not yet returned by wait_one()
  std::deque<std::pair<std::int64_t, outcome>> ended;
  // The thread the pending calls belong to: wait_one() hands out whichever call ended first, so
  // a second thread dispatching or waiting meanwhile would take the first one's results (and
  // return while results it expects are still being written). Refused, not undefined.
  std::thread::id user{};
};

namespace {
void claim(instance_state& s, const char* what) {
  const auto me = std::this_thread::get_id();
  if (s.pending > 0 && s.user != me)
    throw usage_error(std::string("cppless: ") + what + " on an instance that another thread has " +
                      std::to_string(s.pending) +
                      " calls dispatched on and not yet waited for; an instance (and its copies) serves one "
                      "thread at a time: create one instance per thread (dispatcher.create_instance())");
  s.user = me;
}
}  // namespace
}  // namespace detail

void backend::drive_until(std::unique_lock<std::mutex>& lock, const std::function<bool()>& ready) {
  const auto me = std::this_thread::get_id();
  while (!ready()) {
    // Another thread drives: wait for it to report progress. The same thread may drive again
    // from inside a function it is serving (nested dispatch in a worker).
    if (driving_ && driver_ != me) {
      driver_done_.wait(lock);
      continue;
    }
    const bool outer = !driving_;
    driving_ = true;
    driver_ = me;
    struct release {
      backend* self;
      bool outer;
      ~release() {
        if (!outer) return;
        self->driving_ = false;
        self->driver_ = {};
        self->driver_done_.notify_all();
      }
    } guard{this, outer};
    progress(lock, clock::now() + std::chrono::milliseconds(200));
    if (!outer) driver_done_.notify_all();
  }
}

instance::instance(std::shared_ptr<backend> owner) : state_(std::make_shared<detail::instance_state>()) {
  state_->owner = std::move(owner);
}

backend& instance::get_backend() const {
  if (!state_) throw error("cppless: use of an empty instance (create it with dispatcher.create_instance())");
  return *state_->owner;
}

namespace {
// A result that cannot be decoded fails its call (it never escapes as a bare decode_error).
void decode_into(outcome& done, const instance::result_sink& sink) {
  if (done.error) return;
  try {
    sink(done.result.span());
  } catch (const std::exception& e) {
    done.error = std::make_exception_ptr(protocol_error(std::string("result could not be decoded: ") + e.what()));
  }
}
}  // namespace

std::int64_t instance::submit(invocation&& call, result_sink sink) {
  backend& b = get_backend();
  std::unique_lock lock(b.mutex());
  detail::claim(*state_, "dispatch");
  b.admit(lock, call.payload.size());
  detail::claim(*state_, "dispatch");  // admit() may have let other threads run
  const std::int64_t id = state_->next_id++;
  ++state_->pending;
  std::weak_ptr<detail::instance_state> weak = state_;
  // Tracing (trace.hpp): off, one relaxed load; the record ends with the call, exactly once.
  trace::detail::call_record* traced =
      trace::detail::active.load(std::memory_order_relaxed) ? trace::detail::begin(call, b) : nullptr;
  try {
    b.submit(std::move(call), [weak, id, sink = std::move(sink), traced](outcome&& done) {
      done.stats.call_id = id;
      if (traced) trace::detail::end(traced, done);
      auto state = weak.lock();
      if (!state) return;  // the instance is gone; so is the caller's storage
      decode_into(done, sink);
      state->ended.emplace_back(id, std::move(done));
    });
  } catch (...) {
    trace::detail::discard(traced);
    --state_->pending;
    --state_->next_id;
    throw;
  }
  return id;
}

void instance::submit_detached(invocation&& call, backend::completion done) {
  backend& b = get_backend();
  std::unique_lock lock(b.mutex());
  b.admit(lock, call.payload.size());
  const std::int64_t id = state_->next_id++;
  trace::detail::call_record* traced =
      trace::detail::active.load(std::memory_order_relaxed) ? trace::detail::begin(call, b) : nullptr;
  try {
    b.submit(std::move(call), [id, done = std::move(done), traced](outcome&& result) {
      result.stats.call_id = id;
      if (traced) trace::detail::end(traced, result);
      done(std::move(result));
    });
  } catch (...) {
    trace::detail::discard(traced);
    throw;
  }
}

void instance::drive_until(const std::function<bool()>& ready) {
  backend& b = get_backend();
  std::unique_lock lock(b.mutex());
  b.drive_until(lock, ready);
}

std::size_t instance::pending() const {
  if (!state_) return 0;
  std::unique_lock lock(state_->owner->mutex());
  return state_->pending;
}

std::pair<std::int64_t, call_stats> instance::wait_one() {
  backend& b = get_backend();
  std::unique_lock lock(b.mutex());
  if (state_->pending == 0) throw error("cppless: wait_one() with no dispatched call left to wait for");
  detail::claim(*state_, "wait_one()");
  b.drive_until(lock, [this] { return !state_->ended.empty(); });
  auto [id, done] = std::move(state_->ended.front());
  state_->ended.pop_front();
  --state_->pending;
  if (done.error) {
    try {
      std::rethrow_exception(done.error);
    } catch (call_error& e) {
      e.set_call_id(id);
      throw;
    }
  }
  return {id, std::move(done.stats)};
}

void wait(instance& inst, std::size_t n) {
  std::exception_ptr first;
  for (std::size_t i = 0; i < n; ++i) {
    try {
      inst.wait_one();
    } catch (const call_error&) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace cppless
