// cppless/shared/errors.hpp — the exceptions shared objects throw.
//
// Every one derives from cppless::shared::error (itself a cppless::error), so a caller can catch
// all shared-object failures at once, or react to one cause. Messages name the Redis address
// (host:port, never a password) and, where there is one, the object and its namespace.
#pragma once

#include <cppless/error.hpp>

namespace cppless::shared {

class error : public cppless::error {
 public:
  using cppless::error::error;
};

// Redis cannot be reached, the connection broke and could not be re-established, or Redis kept
// answering "not now" (LOADING, BUSY, TRYAGAIN, MASTERDOWN, CLUSTERDOWN) for the whole retry
// budget. The message names the address and the reason (e.g. "Connection refused"). The call did
// not take effect, unless it is an outcome_unknown.
class connection_error : public error {
 public:
  using error::error;
};

// A changing call was sent, its reply was lost, and no resend got through within the retry
// budget: it may or may not have taken effect (a later call of the same handle is still applied
// once, in order).
class outcome_unknown : public connection_error {
 public:
  using connection_error::connection_error;
};

// Redis refused the credentials (WRONGPASS), wants a password that was not given (NOAUTH), or the
// ACL user may not run the commands shared objects need (NOPERM).
class auth_error : public error {
 public:
  using error::error;
};

// The name holds something else: another kind of object, the same kind over another C++ type,
// the same kind with other parameters (e.g. a barrier with another party count), or a Redis value
// cppless did not write. Nothing is read or changed when this is thrown.
class type_mismatch : public error {
 public:
  using error::error;
};

// The object does not exist (any more): its namespace was removed, or it was never created.
class missing_object : public error {
 public:
  using error::error;
};

// A blocking operation (barrier, latch, semaphore, future, queue pop) did not complete within
// the timeout it was given. Whatever the call had registered (an arrival, a waiter) has been
// withdrawn. (Not cppless::timeout_error, which is a dispatched function running too long.)
class wait_timeout : public error {
 public:
  using error::error;
};
using timeout [[deprecated("renamed cppless::shared::wait_timeout")]] = wait_timeout;

// A user-defined operation (custom.hpp) failed: its library did not load (the message carries
// Redis' words), it is not defined, or its body raised (the object was left as it was).
class operation_error : public error {
 public:
  using error::error;
};

// An index outside a list or byte array; nothing was read or changed.
class index_out_of_range : public error {
 public:
  using error::error;
};

// write_once<T>::set on an object that already holds a value.
class already_set : public error {
 public:
  using error::error;
};

// Redis rejected an operation for a reason of its own (e.g. a counter overflowing 64 bits,
// out of memory); the message carries Redis' words.
class server_error : public error {
 public:
  using error::error;
};

// A name or namespace that cannot be used (empty, too long, control characters, glob characters
// in a namespace), or a malformed redis:// URL.
class invalid_argument : public error {
 public:
  using error::error;
};

}  // namespace cppless::shared
