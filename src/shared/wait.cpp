// Waiting for one-time events (latch reaching zero, future set) without losing a wake-up.
#include <cppless/shared/wait.hpp>

namespace cppless::shared::detail {

bool await_event(session& ses, const object_ref& obj, const kind_info& kind, script register_script,
                 script withdraw_script, clock::time_point deadline) {
  const std::string wake = wake_list(obj, ses);
  for (;;) {
    if (ses.script(obj, register_script, kind, true, {}).int_at(0) == 1) return true;
    for (;;) {
      std::optional<reply> got = ses.blocking({"BLPOP", wake}, deadline);
      if (!got) break;                   // connection lost while blocked: register again
      if (!got->is_nil()) return true;   // our token
      // Timed out: leave, unless the event came in the meantime.
      return ses.script(obj, withdraw_script, kind, true, {}).int_at(0) == 1;
    }
  }
}

std::string wake_list(const object_ref& obj, const session& ses) { return obj.sub_key("t" + ses.client_id()); }

std::string after(milliseconds timeout) {
  if (timeout == no_timeout) return "";
  return "within " + std::to_string(timeout.count()) + " ms";
}

}  // namespace cppless::shared::detail
