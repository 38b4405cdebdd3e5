// barrier: arrival and release in one script; waiters block on the generation's wake list.
#include <cppless/shared/barrier.hpp>
#include <cppless/shared/errors.hpp>
#include <cppless/shared/wait.hpp>

#include <string>

namespace cppless::shared {

const detail::kind_info& barrier::kind() {
  static const detail::kind_info k{"barrier", "barrier"};
  return k;
}

std::int64_t barrier::arrive_and_wait(milliseconds timeout) const {
  const auto deadline = detail::deadline_after(timeout);
  detail::session ses(ref_);
  detail::reply r = ses.script(ref_, detail::script::barrier_arrive, kind(), true, {});
  const std::string gen = r.str_at(1);
  const std::int64_t number = std::stoll(gen);
  if (r.int_at(0) == 1) return number;  // last arrival: released the others
  const std::string wake = ref_.sub_key("w" + gen);
  for (;;) {
    std::optional<detail::reply> got = ses.blocking({"BLPOP", wake}, deadline);
    if (got && !got->is_nil()) return number;
    if (!got) {
      // The connection broke while blocked (a token may have been taken and lost with it): the
      // generation number tells whether the barrier opened.
      if (ses.script(ref_, detail::script::barrier_check, kind(), false, {gen}).int_at(0) == 1) return number;
      if (detail::clock::now() < deadline) continue;
    }
    detail::reply w = ses.script(ref_, detail::script::barrier_withdraw, kind(), true, {gen});
    if (w.int_at(0) == 1) return number;  // opened just before we gave up
    throw shared::wait_timeout("cppless::shared: barrier " + ref_.describe() + " (" + std::to_string(parties_) +
                          " parties): only " + std::to_string(w.int_at(1) + 1) + " had arrived " + detail::after(timeout) +
                          "; this arrival was withdrawn");
  }
}

}  // namespace cppless::shared
