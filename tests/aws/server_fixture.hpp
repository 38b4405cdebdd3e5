// Test fixture: a lambda_server on a free loopback port, the environment of a client pointed at
// it (endpoint, region, credentials), and the server's test hooks (faults, counters).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace aws_test {

inline constexpr const char* access_key = "AKIDCPPLESSTEST";
inline constexpr const char* secret_key = "cppless-test-secret/+=";

class local_lambda {
 public:
  // Starts the server with these extra arguments; `serve_self`: every function name is served
  // by this test executable (the functions dispatched by the test are entries of it).
  explicit local_lambda(std::vector<std::string> args = {}, bool serve_self = true);
  ~local_lambda();
  local_lambda(const local_lambda&) = delete;
  local_lambda& operator=(const local_lambda&) = delete;

  int port() const { return port_; }
  // HTTPS, as Lambda: HTTP/2 by ALPN, a certificate made by the server (ca_file() to trust).
  std::string endpoint() const { return "https://127.0.0.1:" + std::to_string(port_); }
  std::string plain_endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string ca_file() const { return dir_ + "/ca.pem"; }
  // Sets AWS_* variables so aws_dispatcher::from_env() talks to this server.
  void export_env() const;
  // POST /_cppless/faults with this JSON body.
  void inject(const std::string& fault_json) const;
  std::string stats() const;
  const std::string& dir() const { return dir_; }  // GET /_cppless/stats (JSON)

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
};

std::string http_get_or_post(const std::string& url, const std::string* post_body);

}  // namespace aws_test
