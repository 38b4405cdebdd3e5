// Lease tokens and the secrets behind them (HMAC-SHA256, OpenSSL).
//
// A token says: lease L of user U may run `cores` executors with `memory_mb` each on executor
// manager M until `expires_ms` (Unix time, milliseconds). The resource manager signs it with the
// cluster key it shares with the executor managers; a user never knows that key, so a user
// cannot forge or stretch a token. Users prove who they are to the resource manager with their
// own secret (challenge-response on a fresh nonce), never with a secret common to all users.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace cppless::lease {

std::string to_hex(const unsigned char* data, std::size_t size);
std::string hmac_sha256_hex(const std::string& key, const std::string& message);
std::string sha256_hex_of_file(const std::string& path);
std::string random_hex(std::size_t bytes);
// Constant-time comparison of two MACs.
bool same_mac(const std::string& a, const std::string& b);
std::int64_t unix_ms();

struct lease_token {
  std::string lease;
  std::string user;
  std::string manager;
  std::int64_t expires_ms = 0;
  unsigned cores = 0;          // executors this token may start on `manager`
  unsigned memory_mb = 0;      // per executor
  std::string mode = "hot";    // "hot" | "warm"
  std::string mac;             // hex HMAC-SHA256 over the fields above

  std::string signed_text() const;
  void sign(const std::string& cluster_key) { mac = hmac_sha256_hex(cluster_key, signed_text()); }
  // Why the token is not valid for `manager` now, or empty if it is.
  std::string problem(const std::string& cluster_key, const std::string& manager, std::int64_t now_ms) const;

  nlohmann::json to_json() const;
  static lease_token from_json(const nlohmann::json& j);  // throws on missing fields
};

// The resource manager's secrets file: one "NAME SECRET" per line ('#' comments). NAME
// "@managers" is the cluster key (executor managers authenticate with it; tokens are signed
// with it); every other line is a user. Refused if group/other may read it.
struct secrets {
  std::string cluster_key;
  std::map<std::string, std::string> users;
  static secrets load(const std::string& path);
};

// A secret given to a manager or client: the text of CPPLESS_*_SECRET, or the first line of the
// file named by CPPLESS_*_SECRET_FILE.
std::string secret_from_env(const char* variable);

}  // namespace cppless::lease
