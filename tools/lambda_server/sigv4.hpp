// Checking AWS Signature Version 4 on incoming requests, as the Lambda front end does: the
// canonical request, string to sign and signing key of the SigV4 specification, recomputed from
// the request and the secret of the access key it names. (Its agreement with botocore's signer
// is a test: tests/aws/sigv4_test.py.)
#pragma once

#include "http.hpp"

#include <map>
#include <string>

namespace lambda_server {

struct sigv4_result {
  bool ok = false;
  int status = 403;
  std::string error_type;  // InvalidSignatureException, UnrecognizedClientException, ...
  std::string message;
  std::string access_key;
};

// keys: access key id -> secret. `service` is "lambda".
sigv4_result check_sigv4(const http_request& req, const std::map<std::string, std::string>& keys,
                         const std::string& service);

std::string sha256_hex(std::string_view data);
std::string sha256_base64(std::string_view data);

}  // namespace lambda_server
