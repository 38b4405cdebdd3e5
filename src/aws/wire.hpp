// What travels inside a Lambda invocation: the JSON documents the host and the function
// exchange (Lambda only carries JSON, so the binary archive rides in base64).
//
//   request   {"cppless":1,"function":"<id hash, hex>","fingerprint":"<hex>","payload":"<base64>"}
//   response  {"cppless":1,"cold":true,"exec_ns":1234,"result":"<base64>"}
//   failure   a Lambda function error: {"errorType":"...","errorMessage":"...","stackTrace":[]},
//             which the service returns with X-Amz-Function-Error. errorType is the C++ type of
//             an exception the function threw, or one of the cppless.* types below for failures
//             cppless detects itself; the Lambda platform adds its own (Sandbox.Timedout,
//             Runtime.ExitError, ...).
#pragma once

#include <cppless/byte_buffer.hpp>
#include "core/protocol.hpp"

#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <string_view>

namespace cppless::aws::wire {

inline constexpr const char* unknown_function_type = "cppless.UnknownFunction";
inline constexpr const char* fingerprint_type = "cppless.FingerprintMismatch";
inline constexpr const char* decode_error_type = "cppless.DecodeError";
inline constexpr const char* timeout_type = "cppless.Timeout";

struct request {
  std::uint64_t function_id = 0;
  std::uint64_t fingerprint = 0;
  byte_buffer payload;
};

struct response {
  bool cold = false;
  std::uint64_t exec_ns = 0;
  byte_buffer result;
};

// Size of encode_request's output, to refuse oversized calls before building them.
std::size_t request_size(std::size_t payload_bytes);
std::string encode_request(std::uint64_t function_id, std::uint64_t fingerprint, std::span<const std::byte> payload);
request decode_request(std::string_view body);  // throws decode_error

std::string encode_response(std::span<const std::byte> result, bool cold, std::uint64_t exec_ns);
response decode_response(std::string_view body);  // throws decode_error

std::string encode_error(std::string_view type, std::string_view message);
// The typed exception for a function error body: remote_error with the remote type and
// message, or the cppless exception a cppless.* / platform type stands for.
std::exception_ptr error_from_function_error(std::string_view body, const std::string& function_name);

// The errorType for a worker-side protocol status (unknown function, fingerprint, decode).
const char* error_type(protocol::status code);

}  // namespace cppless::aws::wire
