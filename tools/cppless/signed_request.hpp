// One SigV4-signed HTTPS request of the deploy commands (Lambda's control plane, S3), sent by
// libcurl: the signature (CURLOPT_AWS_SIGV4), the session token, the CA bundle, the body, and an
// upload progress line on a terminal. Never an empty "Expect:" header: libcurl before 8.3 signs
// it although it removes it (curl issue #11664), and AWS refuses such a request.
#pragma once

#include <cppless/aws/settings.hpp>

#include <string>
#include <vector>

namespace cppless::tools {

struct signed_request {
  std::string method;                // GET, POST, PUT, DELETE or HEAD
  std::string url;
  std::string service;               // the signing name: "lambda", "s3"
  std::vector<std::string> headers;  // "Name: value", besides X-Amz-Security-Token
  const std::string* body = nullptr; // sent when set (must outlive the call)
  long timeout_s = 600;
  std::string progress_label;        // non-empty: "uploading <label>: x / y KiB" on a terminal
};

struct signed_response {
  long status = 0;
  std::string body;
};

// Throws std::runtime_error naming the method, the URL and libcurl's error when no HTTP answer
// came; an HTTP error status is returned, not thrown. The secret never appears in a message.
signed_response send(const aws::settings& s, const signed_request& request);

}  // namespace cppless::tools
