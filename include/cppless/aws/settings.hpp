// cppless/aws/settings.hpp — where to reach Lambda and as whom: region, endpoint, credentials.
//
// Resolved the way the AWS CLI and SDKs do, so a machine set up for them works unchanged:
//   credentials: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN), else the
//                profile (AWS_PROFILE, else "default") in the shared credentials file
//                (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials), else the profile's
//                `credential_process` (run without a shell; its JSON gives the keys), else keys
//                in the config file (AWS_CONFIG_FILE, else ~/.aws/config, section
//                "[profile NAME]" or "[default]"). SSO and instance roles are not read.
//   region:      AWS_REGION, AWS_DEFAULT_REGION, the profile's `region`;
//   endpoint:    AWS_ENDPOINT_URL_LAMBDA, AWS_ENDPOINT_URL, the profile's `endpoint_url`,
//                else https://lambda.<region>.amazonaws.com;
//   CA bundle:   AWS_CA_BUNDLE, the profile's `ca_bundle` (else the system's trust store);
//   role (deploy only): CPPLESS_LAMBDA_ROLE, the profile's `cppless_lambda_role`.
// Used by the dispatcher and by `cppless deploy`. The secret never appears in a message:
// describe() shows the key id and where each value came from.
#pragma once

#include <chrono>
#include <span>
#include <string>

namespace cppless::aws {

struct credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty for long-term keys
  std::string source;         // "environment", "~/.aws/credentials [default]", ...
  std::string expiration;     // credential_process: when they expire (ISO 8601), else empty

  // `expiration` as a time; time_point::max() when there is none (or it cannot be read).
  std::chrono::system_clock::time_point expires() const;
};

struct settings {
  std::string region;
  std::string endpoint;  // scheme://host[:port], no trailing slash
  credentials creds;
  std::string ca_bundle;  // PEM file of trusted CAs (empty: the system's)
  std::string role_arn;   // execution role for created functions (deploy)
  std::string profile;

  // Reads environment and files; throws cppless::error naming what is missing or malformed.
  static settings resolve();
  // For messages: region, endpoint, key id and the sources; never the secret or the token.
  std::string describe() const;
};

// Where Linux distributions keep the system's CA bundle: Debian/Ubuntu, Amazon Linux 2023/RHEL
// (/etc/pki), SUSE, Alpine.
inline const char* const system_ca_bundles[] = {
    "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem"};

// The CA bundle libcurl should use when none is configured: empty if libcurl's compiled-in one
// (`builtin`, from curl_version_info) exists, else the first readable of `candidates` (a program
// built on Debian keeps Debian's path, which Amazon Linux 2023 does not have), else empty.
std::string fallback_ca_bundle(const char* builtin, std::span<const char* const> candidates = system_ca_bundles);

}  // namespace cppless::aws
