// Running one call inside a function: find the entry, check the fingerprint, invoke it and
// capture whatever it throws. The AWS runtime loop uses it; it mirrors what the local worker
// (src/local/worker_loop.cpp, uplink::serve) does around the same registry.
#pragma once

#include <cppless/byte_buffer.hpp>
#include <cppless/protocol.hpp>

#include <cstdint>
#include <span>
#include <string>

namespace cppless::aws {

struct served {
  protocol::status code = protocol::status::ok;
  std::string error_type;     // status remote_exception: the C++ type of what the function threw
  std::string error_message;  // any failure
  byte_buffer result;         // status ok
};

served serve_call(std::uint64_t function_id, std::uint64_t fingerprint, std::span<const std::byte> payload);

}  // namespace cppless::aws
