// libFuzzer target for what the AWS backend reads from the network: the Runtime API replies the
// function's runtime parses (runtime_http), and the Lambda responses the host decodes (the
// cppless response envelope, function-error bodies) and the requests a function decodes.
// Every input must end in a value or a typed exception, never a crash or an unbounded read.
// Built twice: the fuzzer, and (CPPLESS_FUZZ_SEED_MAIN) a program that writes valid seeds.
#include "runtime_http.hpp"
#include "wire.hpp"

#include <cppless/error.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#ifndef CPPLESS_FUZZ_SEED_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0: {
        cppless::aws::http_reply reply;
        const std::size_t used = cppless::aws::parse_http_reply(in, reply);
        if (used > in.size()) __builtin_trap();  // never claims bytes it was not given
        break;
      }
      case 1: (void)cppless::aws::wire::decode_response(in); break;
      case 2: (void)cppless::aws::wire::decode_request(in); break;
      case 3: {
        const std::exception_ptr e = cppless::aws::wire::error_from_function_error(in, "fuzz");
        if (!e) __builtin_trap();  // a function error always becomes an exception
        break;
      }
    }
  } catch (const cppless::aws::runtime_http_error&) {
  } catch (const cppless::error&) {
  }
  return 0;
}

#else

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::byte payload[] = {std::byte{1}, std::byte{2}, std::byte{3}};
  const std::string seeds[] = {
      std::string(1, '\0') + "HTTP/1.1 200 OK\r\nLambda-Runtime-Aws-Request-Id: 8476a536\r\nContent-Length: 2\r\n\r\n{}",
      std::string(1, '\0') + "HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n",
      std::string(1, '\1') + cppless::aws::wire::encode_response(payload, true, 1234),
      std::string(1, '\2') + cppless::aws::wire::encode_request(0x1234, 0x5678, payload),
      std::string(1, '\3') + cppless::aws::wire::encode_error("std::invalid_argument", "bad"),
      std::string(1, '\3') + "{\"errorType\":\"Sandbox.Timedout\",\"errorMessage\":\"Task timed out\"}",
  };
  int i = 0;
  for (const auto& s : seeds) {
    const std::string path = std::string(argv[1]) + "/seed" + std::to_string(i++);
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return 1;
    std::fwrite(s.data(), 1, s.size(), f);
    std::fclose(f);
  }
  return 0;
}

#endif
