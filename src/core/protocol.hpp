// core/protocol.hpp — the worker protocol, independent of the transport that carries it (internal:
// backends include it; users never see frames).
//
// A host and a worker exchange frames: a fixed 48-byte header and a payload. The same frames
// travel over the local backend's shared-memory rings and can travel over a TCP stream (leased
// executors), so everything here is plain bytes plus a byte-stream decoder that accepts input
// in arbitrary pieces.
//
//   host -> worker : call (run a function), result (answer to the worker's nested call), shutdown
//   worker -> host : result (answer to a call), call (nested dispatch), waiting (blocked on
//                    nested calls: the host may hand this worker more calls meanwhile),
//                    started (a call it held is starting out of turn, inside such a wait; sent
//                    before the function runs, so a host that sees the worker die knows whether
//                    the call may have run)
#pragma once

#include <cppless/byte_buffer.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>

namespace cppless::protocol {

inline constexpr std::uint32_t magic = 0x314c5043;  // "CPL1"
inline constexpr std::size_t max_payload = std::size_t{1} << 30;  // hard cap of one frame

enum class frame_kind : std::uint16_t { call = 1, result = 2, waiting = 3, shutdown = 4, started = 5 };

// How a call ended, as the worker reports it (status of a `result` frame).
enum class status : std::uint16_t {
  ok = 0,
  remote_exception = 1,    // payload: archive(type, message)
  unknown_function = 2,    // payload: archive(message)
  fingerprint_mismatch = 3,
  decode_error = 4,
  too_large = 5,
  worker_crashed = 6,      // host -> worker results of nested calls: payload archive(message)
  timeout = 7,
  protocol_failure = 8,
};

struct frame_header {
  std::uint32_t magic = protocol::magic;
  frame_kind kind = frame_kind::call;
  status code = status::ok;
  std::uint64_t call_id = 0;       // chosen by the side that sent the call
  std::uint64_t function_id = 0;   // entry id hash (calls)
  std::uint64_t fingerprint = 0;   // entry fingerprint (calls)
  std::uint64_t exec_ns = 0;       // results: time spent running the function
  std::uint32_t payload_size = 0;
  std::uint32_t flags = 0;         // results: bit 0 = first call served by this worker (cold)
};
static_assert(sizeof(frame_header) == 48, "frame header must stay 48 bytes");

inline constexpr std::uint32_t flag_cold = 1;

std::string describe(status s);

// The typed exception a failed call ends in, from a result frame's status and payload.
std::exception_ptr error_from(status code, std::span<const std::byte> payload, const std::string& function_name);
// The other way round, for forwarding a failure (nested calls): fills status and payload.
void encode_error(const std::exception_ptr& error, status& code, byte_buffer& payload);
// Payload of a failed result: (type, message) for remote exceptions, (message) otherwise.
void encode_failure(status code, const std::string& type, const std::string& message, byte_buffer& payload);

// Runs one call on the function side of any backend: finds the entry, checks the fingerprint,
// invokes it and captures what it throws (its C++ type and message).
struct served {
  status code = status::ok;
  std::string error_type;     // remote_exception: the type of what the function threw
  std::string error_message;  // any failure
  byte_buffer result;         // ok: the encoded result
};
// `storage` (emptied) becomes the result's buffer: a worker that hands back the previous
// result's buffer encodes without allocating.
served serve_call(std::uint64_t function_id, std::uint64_t fingerprint, std::span<const std::byte> payload,
                  byte_buffer storage = {});

// Incremental decoder: feed bytes as they arrive; `take` yields complete frames. It trusts
// nothing: a wrong magic, an unknown frame kind or a payload over `limit` throws protocol_error
// before any payload byte is stored.
class frame_decoder {
 public:
  explicit frame_decoder(std::size_t limit = max_payload) : limit_(limit < max_payload ? limit : max_payload) {}

  // Consumes up to `size` bytes; returns how many were taken (stops after a complete frame).
  std::size_t feed(const std::byte* data, std::size_t size);
  bool ready() const { return state_ == state::done; }
  // Takes the completed frame; the decoder starts over, keeping the buffer `payload` held
  // before (so a caller that passes the same buffer each time does not allocate per frame).
  void take(frame_header& header, byte_buffer& payload);
  // Bytes still missing for the current frame (header or payload).
  std::size_t wanted() const;

 private:
  enum class state { header, payload, done };
  std::size_t limit_;
  state state_ = state::header;
  std::size_t have_ = 0;
  frame_header header_{};
  byte_buffer payload_;
};

}  // namespace cppless::protocol
