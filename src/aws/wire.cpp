#include "wire.hpp"

#include <cppless/base64.hpp>
#include <cppless/error.hpp>
#include <cppless/identity.hpp>

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdio>

namespace cppless::aws::wire {

namespace {

std::uint64_t parse_hex(const nlohmann::json& doc, const char* key) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_string()) throw decode_error(std::string("cppless request: no \"") + key + "\"");
  const auto& s = it->get_ref<const std::string&>();
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || end != s.data() + s.size()) throw decode_error(std::string("cppless request: bad \"") + key + "\"");
  return v;
}

nlohmann::json parse(std::string_view body, const char* what) {
  auto doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    throw decode_error(std::string("cppless ") + what + ": not a JSON object (" + std::to_string(body.size()) + " bytes)");
  return doc;
}

const std::string& string_field(const nlohmann::json& doc, const char* key, const char* what) {
  auto it = doc.find(key);
  if (it == doc.end() || !it->is_string())
    throw decode_error(std::string("cppless ") + what + ": no string \"" + key + "\"");
  return it->get_ref<const std::string&>();
}

}  // namespace

std::size_t request_size(std::size_t payload_bytes) {
  return sizeof R"({"cppless":1,"function":"0123456789abcdef","fingerprint":"0123456789abcdef","payload":""})" - 1 +
         base64_encoded_size(payload_bytes);
}

std::string encode_request(std::uint64_t function_id, std::uint64_t fingerprint, std::span<const std::byte> payload) {
  std::string out;
  out.reserve(request_size(payload.size()));
  out += R"({"cppless":1,"function":")";
  out += hex64(function_id);
  out += R"(","fingerprint":")";
  out += hex64(fingerprint);
  out += R"(","payload":")";
  base64_encode_append(payload, out);
  out += "\"}";
  return out;
}

request decode_request(std::string_view body) {
  const auto doc = parse(body, "request");
  request r;
  if (!doc.contains("cppless"))
    throw decode_error("cppless request: the event is not a cppless call (no \"cppless\" field)");
  r.function_id = parse_hex(doc, "function");
  r.fingerprint = parse_hex(doc, "fingerprint");
  r.payload = base64_decode(string_field(doc, "payload", "request"));
  return r;
}

std::string encode_response(std::span<const std::byte> result, bool cold, std::uint64_t exec_ns) {
  std::string out;
  out.reserve(64 + base64_encoded_size(result.size()));
  out += R"({"cppless":1,"cold":)";
  out += cold ? "true" : "false";
  out += R"(,"exec_ns":)";
  out += std::to_string(exec_ns);
  out += R"(,"result":")";
  base64_encode_append(result, out);
  out += "\"}";
  return out;
}

response decode_response(std::string_view body) {
  const auto doc = parse(body, "response");
  response r;
  if (!doc.contains("cppless"))
    throw decode_error("cppless response: the function did not answer like a cppless function (no \"cppless\" field)");
  if (auto it = doc.find("cold"); it != doc.end() && it->is_boolean()) r.cold = it->get<bool>();
  if (auto it = doc.find("exec_ns"); it != doc.end() && it->is_number_unsigned()) r.exec_ns = it->get<std::uint64_t>();
  r.result = base64_decode(string_field(doc, "result", "response"));
  return r;
}

std::string encode_error(std::string_view type, std::string_view message) {
  nlohmann::json doc = {{"errorType", type}, {"errorMessage", message}, {"stackTrace", nlohmann::json::array()}};
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

const char* error_type(protocol::status code) {
  switch (code) {
    case protocol::status::unknown_function: return unknown_function_type;
    case protocol::status::fingerprint_mismatch: return fingerprint_type;
    case protocol::status::decode_error: return decode_error_type;
    case protocol::status::timeout: return timeout_type;
    default: return "cppless.Error";
  }
}

std::exception_ptr error_from_function_error(std::string_view body, const std::string& function_name) {
  std::string type = "Unknown", message;
  auto doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_object()) {
    if (auto it = doc.find("errorType"); it != doc.end() && it->is_string()) type = it->get<std::string>();
    if (auto it = doc.find("errorMessage"); it != doc.end() && it->is_string()) message = it->get<std::string>();
  } else {
    message = std::string(body.substr(0, 512));
  }
  // Reuse the worker protocol's mapping from status to exception type.
  protocol::status code = protocol::status::remote_exception;
  if (type == unknown_function_type) code = protocol::status::unknown_function;
  else if (type == fingerprint_type) code = protocol::status::fingerprint_mismatch;
  else if (type == decode_error_type) code = protocol::status::decode_error;
  else if (type == timeout_type || type == "Sandbox.Timedout" || message.find("Task timed out") != std::string::npos)
    code = protocol::status::timeout;
  else if (type == "Runtime.ExitError" || type == "Runtime.Unknown" || type == "Runtime.OutOfMemory")
    code = protocol::status::worker_crashed;
  if (code == protocol::status::timeout || code == protocol::status::worker_crashed)
    message = "Lambda function " + function_name + ": " + type + ": " + message;
  byte_buffer payload;
  protocol::encode_failure(code, type, message, payload);
  return protocol::error_from(code, payload.span(), function_name);
}

}  // namespace cppless::aws::wire
