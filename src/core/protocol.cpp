// Frame decoding for any byte stream (shared-memory ring, TCP).
#include <cppless/error.hpp>
#include "core/protocol.hpp"

#include <cstring>

namespace cppless::protocol {

std::string describe(status s) {
  switch (s) {
    case status::ok: return "ok";
    case status::remote_exception: return "remote exception";
    case status::unknown_function: return "unknown function";
    case status::fingerprint_mismatch: return "fingerprint mismatch";
    case status::decode_error: return "payload could not be decoded";
    case status::too_large: return "payload too large";
    case status::worker_crashed: return "worker crashed";
    case status::timeout: return "timeout";
    case status::protocol_failure: return "protocol failure";
  }
  return "unknown status " + std::to_string(static_cast<int>(s));
}

std::size_t frame_decoder::wanted() const {
  switch (state_) {
    case state::header: return sizeof(frame_header) - have_;
    case state::payload: return header_.payload_size - have_;
    case state::done: return 0;
  }
  return 0;
}

std::size_t frame_decoder::feed(const std::byte* data, std::size_t size) {
  std::size_t used = 0;
  if (state_ == state::header) {
    std::size_t n = std::min(size, sizeof(frame_header) - have_);
    std::memcpy(reinterpret_cast<std::byte*>(&header_) + have_, data, n);
    have_ += n;
    used += n;
    if (have_ < sizeof(frame_header)) return used;
    if (header_.magic != magic)
      throw protocol_error("cppless protocol: bad frame magic (peer from another version or corrupt stream)");
    if (header_.kind < frame_kind::call || header_.kind > frame_kind::started)
      throw protocol_error("cppless protocol: unknown frame kind " + std::to_string(static_cast<int>(header_.kind)));
    if (header_.payload_size > limit_)
      throw protocol_error("cppless protocol: frame payload of " + std::to_string(header_.payload_size) +
                           " bytes exceeds the limit of " + std::to_string(limit_) + " bytes");
    have_ = 0;
    payload_.clear();
    payload_.reserve(header_.payload_size);
    state_ = header_.payload_size ? state::payload : state::done;
  }
  if (state_ == state::payload) {
    std::size_t n = std::min(size - used, header_.payload_size - have_);
    payload_.append(data + used, n);
    have_ += n;
    used += n;
    if (have_ == header_.payload_size) state_ = state::done;
  }
  return used;
}

void frame_decoder::take(frame_header& header, byte_buffer& payload) {
  header = header_;
  std::swap(payload, payload_);
  // The caller's old buffer is the next frame's, unless it is big: a worker that once took a
  // large payload should not hold on to that memory.
  constexpr std::size_t keep_at_most = std::size_t{1} << 20;
  if (payload_.capacity() > keep_at_most) payload_ = byte_buffer();
  payload_.clear();
  have_ = 0;
  state_ = state::header;
}

}  // namespace cppless::protocol

#include <cppless/archive.hpp>

namespace cppless::protocol {

void encode_failure(status code, const std::string& type, const std::string& message, byte_buffer& payload) {
  output_archive ar(payload);
  if (code == status::remote_exception) ar(type);
  ar(message);
}

std::exception_ptr error_from(status code, std::span<const std::byte> payload, const std::string& function_name) {
  std::string type, message;
  try {
    input_archive in(payload.data(), payload.size());
    if (code == status::remote_exception) in(type);
    in(message);
  } catch (const std::exception& e) {
    message = std::string("(undecodable error payload: ") + e.what() + ")";
  }
  const std::string where = " [" + function_name + "]";
  switch (code) {
    case status::ok: return nullptr;
    case status::remote_exception: return std::make_exception_ptr(remote_error(type, message + where));
    case status::unknown_function:
    case status::fingerprint_mismatch: return std::make_exception_ptr(unknown_function(message + where));
    case status::decode_error: return std::make_exception_ptr(protocol_error(message + where));
    case status::too_large: return std::make_exception_ptr(payload_too_large(message + where));
    case status::worker_crashed: return std::make_exception_ptr(worker_crashed(message));
    case status::timeout: return std::make_exception_ptr(timeout_error(message));
    case status::protocol_failure: break;
  }
  return std::make_exception_ptr(protocol_error(describe(code) + ": " + message + where));
}

void encode_error(const std::exception_ptr& error, status& code, byte_buffer& payload) {
  payload.clear();
  try {
    std::rethrow_exception(error);
  } catch (const remote_error& e) {
    code = status::remote_exception;
    encode_failure(code, e.remote_type(), e.remote_message(), payload);
  } catch (const timeout_error& e) {
    code = status::timeout;
    encode_failure(code, "", e.what(), payload);
  } catch (const worker_crashed& e) {
    code = status::worker_crashed;
    encode_failure(code, "", e.what(), payload);
  } catch (const unknown_function& e) {
    code = status::unknown_function;
    encode_failure(code, "", e.what(), payload);
  } catch (const std::exception& e) {
    code = status::protocol_failure;
    encode_failure(code, "", e.what(), payload);
  }
}

}  // namespace cppless::protocol
