// Running one call inside a worker, whatever the transport: every backend's function side uses it.
#include <cppless/entry.hpp>
#include <cppless/error.hpp>
#include <cppless/identity.hpp>
#include "core/protocol.hpp"

#include <cxxabi.h>

#include <typeinfo>

namespace cppless::protocol {

served serve_call(std::uint64_t function_id, std::uint64_t fingerprint, std::span<const std::byte> payload,
                  byte_buffer storage) {
  using protocol::status;
  served out;
  out.result = std::move(storage);
  out.result.clear();
  const entry* e = registry::global().find(function_id);
  if (!e) {
    out.code = status::unknown_function;
    out.error_message = "cppless worker: no function with id hash " + std::to_string(function_id) +
                        " in this executable (the caller is another build, or a stale deployment)";
    return out;
  }
  if (e->fingerprint != fingerprint) {
    out.code = status::fingerprint_mismatch;
    out.error_message = "cppless worker: " + e->name +
                        " has a different capture/argument layout in this build than in the caller's "
                        "(fingerprint mismatch); rebuild and redeploy both from the same sources";
    return out;
  }
  try {
    e->invoke(payload, out.result);
  } catch (const decode_error& ex) {
    out.result.clear();
    out.code = status::decode_error;
    out.error_message = std::string("cppless worker: ") + ex.what();
  } catch (const std::exception& ex) {
    out.result.clear();
    out.code = status::remote_exception;
    out.error_type = demangle(typeid(ex).name());
    out.error_message = ex.what();
  } catch (...) {
    out.result.clear();
    out.code = status::remote_exception;
    auto* type = abi::__cxa_current_exception_type();
    out.error_type = type ? demangle(type->name()) : "unknown";
    out.error_message = "(not a std::exception)";
  }
  return out;
}

}  // namespace cppless::protocol
