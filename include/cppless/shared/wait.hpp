// cppless/shared/wait.hpp — blocking on a one-time event (internal; latch and future use it).
//
// The caller registers as a waiter in the same script that finds the event has not happened, then
// blocks on the object's wake list (BLPOP); the event pushes one token per registered waiter. On
// timeout the registration is withdrawn in one script, which also tells whether the event
// happened in the meantime. A connection lost while blocked is re-established and the caller
// registers again (a waiter is registered once, however often it registers).
#pragma once

#include <cppless/shared/client.hpp>

namespace cppless::shared::detail {

// true: the event happened; false: timed out, registration withdrawn.
bool await_event(session& ses, const object_ref& obj, const kind_info& kind, script register_script,
                 script withdraw_script, clock::time_point deadline);

// The list on which the waiter holding `ses` blocks (its wake-up token arrives there).
std::string wake_list(const object_ref& obj, const session& ses);

// "after 500 ms" / "" (no limit), for timeout messages.
std::string after(milliseconds timeout);

}  // namespace cppless::shared::detail
