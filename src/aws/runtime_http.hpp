// A minimal HTTP/1.1 client for the Lambda Runtime API (plain HTTP on the sandbox's loopback).
//
// The function build of a program (zig, glibc 2.34 floor, see docs/aws.md) has no libcurl, and
// the Runtime API needs none: one keep-alive connection per poller, requests with a
// Content-Length body, responses with Content-Length or chunked bodies. Every failure (connect,
// I/O, malformed reply) is a runtime_http_error, never a hang on a half-read reply: reads other
// than the long poll of /next have a time limit.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cppless::aws {

class runtime_http_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct http_reply {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names as sent
  std::string body;
  // The value of a header (names compare case-insensitively), or nullptr.
  const std::string* header(std::string_view name) const;
};

// Parses one HTTP/1.1 response from `data` (status line, headers, Content-Length or chunked
// body). Returns the number of bytes it took, 0 if `data` holds no complete response yet;
// throws runtime_http_error on a malformed one. Exposed for the fuzzer.
std::size_t parse_http_reply(std::string_view data, http_reply& out);

class runtime_connection {
 public:
  explicit runtime_connection(std::string host_port);  // "127.0.0.1:9001", as AWS_LAMBDA_RUNTIME_API
  ~runtime_connection();
  runtime_connection(const runtime_connection&) = delete;
  runtime_connection& operator=(const runtime_connection&) = delete;

  // Sends one request and reads its reply. `limit` bounds the wait for the reply (zero: no
  // limit, for the long poll). A kept-alive connection the peer closed is reopened once.
  http_reply request(std::string_view method, std::string_view path,
                     const std::vector<std::pair<std::string, std::string>>& headers, std::string_view body,
                     std::chrono::milliseconds limit);

 private:
  void connect();
  void close();
  http_reply exchange(const std::string& head, std::string_view body, std::chrono::milliseconds limit);

  std::string host_, port_;
  int fd_ = -1;
  std::string buffer_;   // bytes read past the previous reply
  bool replied_ = false;  // the current exchange received bytes (then it is never re-sent)
};

}  // namespace cppless::aws
