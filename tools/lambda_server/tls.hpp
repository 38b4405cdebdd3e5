// TLS for the local server, so clients talk to it the way they talk to Lambda (HTTPS, HTTP/2
// negotiated by ALPN): a self-signed certificate for 127.0.0.1/localhost made at start-up and
// written out as a PEM file that clients trust (AWS_CA_BUNDLE, boto3's verify=).
#pragma once

#include <string>

typedef struct ssl_ctx_st SSL_CTX;

namespace lambda_server {

// A server context with a fresh certificate; writes the certificate to `ca_path`.
SSL_CTX* make_tls_context(const std::string& ca_path);

}  // namespace lambda_server
