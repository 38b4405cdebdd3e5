// semaphore: acquire registers as a waiter when permits are short; release wakes every waiter,
// each of which tries again (so a permit can go to a newcomer: not fair, like Java's default).
#include <cppless/shared/errors.hpp>
#include <cppless/shared/semaphore.hpp>
#include <cppless/shared/wait.hpp>

#include <string>

namespace cppless::shared {

const detail::kind_info& semaphore::kind() {
  static const detail::kind_info k{"semaphore", "semaphore"};
  return k;
}

namespace {
void check_count(std::int64_t n, const char* what) {
  if (n <= 0) throw invalid_argument(std::string("cppless::shared: semaphore::") + what + "(" + std::to_string(n) + "): n must be > 0");
}
}  // namespace

void semaphore::acquire(std::int64_t n, milliseconds timeout) const {
  check_count(n, "acquire");
  const auto deadline = detail::deadline_after(timeout);
  const std::string count = std::to_string(n);
  detail::session ses(ref_);
  const std::string wake = detail::wake_list(ref_, ses);
  for (;;) {
    if (ses.script(ref_, detail::script::sem_acquire, kind(), true, {count, "1"}).int_at(0) == 1) return;
    std::optional<detail::reply> got = ses.blocking({"BLPOP", wake}, deadline);
    if (!got || !got->is_nil()) continue;  // woken (or connection lost): try again
    if (ses.script(ref_, detail::script::sem_withdraw, kind(), true, {count}).int_at(0) == 1) return;
    throw shared::wait_timeout("cppless::shared: semaphore " + ref_.describe() + ": " + count + " permit(s) not available " +
                          detail::after(timeout));
  }
}

bool semaphore::try_acquire(std::int64_t n) const {
  check_count(n, "try_acquire");
  const std::string count = std::to_string(n);
  return detail::run(ref_, detail::script::sem_acquire, kind(), true, {count, "0"}).int_at(0) == 1;
}

std::int64_t semaphore::release(std::int64_t n) const {
  check_count(n, "release");
  const std::string count = std::to_string(n);
  return detail::run(ref_, detail::script::sem_release, kind(), true, {count}).int_at(0);
}

std::int64_t semaphore::available() const { return detail::run(ref_, detail::script::sem_get, kind(), false, {}).int_at(0); }

}  // namespace cppless::shared
