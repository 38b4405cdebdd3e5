// latch: count_down wakes every registered waiter when the count reaches zero.
#include <cppless/shared/errors.hpp>
#include <cppless/shared/latch.hpp>
#include <cppless/shared/wait.hpp>

#include <string>

namespace cppless::shared {

const detail::kind_info& latch::kind() {
  static const detail::kind_info k{"latch", "latch"};
  return k;
}

std::int64_t latch::count_down(std::int64_t n) const {
  if (n < 0) throw invalid_argument("cppless::shared: latch::count_down(" + std::to_string(n) + "): n must be >= 0");
  const std::string d = std::to_string(n);
  return detail::run(ref_, detail::script::latch_count_down, kind(), true, {d}).int_at(0);
}

void latch::wait(milliseconds timeout) const {
  detail::session ses(ref_);
  if (!detail::await_event(ses, ref_, kind(), detail::script::latch_register, detail::script::latch_withdraw,
                           detail::deadline_after(timeout)))
    throw shared::wait_timeout("cppless::shared: latch " + ref_.describe() + " did not reach zero " + detail::after(timeout) +
                          " (count " + std::to_string(count()) + ")");
}

bool latch::try_wait() const { return count() == 0; }

void latch::arrive_and_wait(std::int64_t n, milliseconds timeout) const {
  if (count_down(n) > 0) wait(timeout);
}

std::int64_t latch::count() const { return detail::run(ref_, detail::script::latch_get, kind(), false, {}).int_at(0); }

}  // namespace cppless::shared
