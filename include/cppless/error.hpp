// cppless/error.hpp — the exception types every cppless failure ends in.
//
// One base class (cppless::error) so callers can catch everything cppless throws; one subclass
// per cause so they can react to the cause. A failed call also carries the id it was dispatched
// under, so a caller of wait_one() learns which call ended, even when it ended badly.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace cppless {

class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A payload could not be decoded: truncated, corrupt, or with lengths beyond the buffer.
class decode_error : public error {
 public:
  using error::error;
};

// A payload exceeds the transport's (or the configured) size limit; raised before sending.
class payload_too_large : public error {
 public:
  using error::error;
};

// The backend holds as many unsent payload bytes as it is allowed (local_options::
// max_queued_bytes) and was told to refuse rather than wait; nothing was sent.
class queue_full : public error {
 public:
  using error::error;
};

// An instance was used from two threads at once (it belongs to the thread that has calls
// dispatched on it and not yet waited for); use one instance per thread.
class usage_error : public error {
 public:
  using error::error;
};

// A capture cannot travel (reference, raw pointer, `this`): raised at dispatch, nothing is sent.
class capture_error : public error {
 public:
  using error::error;
};

// Base of every failure of one dispatched call; call_id() is the id dispatch() returned.
class call_error : public error {
 public:
  call_error(const std::string& what, std::int64_t call_id = -1) : error(what), call_id_(call_id) {}
  std::int64_t call_id() const noexcept { return call_id_; }
  void set_call_id(std::int64_t id) noexcept { call_id_ = id; }

 private:
  std::int64_t call_id_;
};

// The function threw on the worker; what() holds the remote exception's type and message.
class remote_error : public call_error {
 public:
  remote_error(const std::string& type, const std::string& message, std::int64_t call_id = -1)
      : call_error("remote exception " + type + ": " + message, call_id), type_(type), message_(message) {}
  const std::string& remote_type() const noexcept { return type_; }
  const std::string& remote_message() const noexcept { return message_; }

 private:
  std::string type_, message_;
};

// The worker died while running the call (signal or unexpected exit); the worker is replaced.
class worker_crashed : public call_error {
 public:
  using call_error::call_error;
};

// The call ran past its config's with_timeout; the worker was killed and is replaced.
class timeout_error : public call_error {
 public:
  using call_error::call_error;
};

// The worker does not know the function id, or its build's fingerprint differs from the caller's.
class unknown_function : public call_error {
 public:
  using call_error::call_error;
};

// The worker or transport broke the protocol (bad frame, wrong version).
class protocol_error : public call_error {
 public:
  using call_error::call_error;
};

}  // namespace cppless
