#include "sigv4.hpp"

#include <cppless/base64.hpp>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <vector>

namespace lambda_server {

namespace {

std::string hex(const unsigned char* d, std::size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (std::size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[d[i] >> 4];
    out[2 * i + 1] = digits[d[i] & 15];
  }
  return out;
}

std::string hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

// RFC 3986 encoding as SigV4 wants it: unreserved characters stay, everything else is %XX.
std::string uri_encode(std::string_view s, bool keep_slash) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

std::string collapse(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// "k1=v1, k2=v2" fields of the Authorization header.
std::string field(std::string_view auth, std::string_view name) {
  auto at = auth.find(std::string(name) + "=");
  if (at == std::string_view::npos) return {};
  at += name.size() + 1;
  auto end = auth.find_first_of(", ", at);
  return std::string(auth.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
}

sigv4_result fail(int status, const char* type, std::string message) {
  return {false, status, type, std::move(message), {}};
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d);
  return hex(d, sizeof d);
}

std::string sha256_base64(std::string_view data) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d);
  std::string out;
  cppless::base64_encode_append(std::as_bytes(std::span(d)), out);
  return out;
}

sigv4_result check_sigv4(const http_request& req, const std::map<std::string, std::string>& keys,
                         const std::string& service) {
  const std::string* auth = req.header("authorization");
  if (!auth) return fail(403, "MissingAuthenticationTokenException", "Missing Authentication Token");
  if (auth->rfind("AWS4-HMAC-SHA256 ", 0) != 0)
    return fail(400, "IncompleteSignatureException", "Authorization header is not AWS4-HMAC-SHA256");
  const std::string credential = field(*auth, "Credential");
  const std::string signed_headers = field(*auth, "SignedHeaders");
  const std::string signature = field(*auth, "Signature");
  // Credential=AKID/yyyymmdd/region/service/aws4_request
  std::vector<std::string> scope_parts;
  for (std::size_t p = 0, q; p <= credential.size(); p = q + 1) {
    q = credential.find('/', p);
    if (q == std::string::npos) q = credential.size();
    scope_parts.push_back(credential.substr(p, q - p));
  }
  if (scope_parts.size() != 5 || signed_headers.empty() || signature.empty() || scope_parts[4] != "aws4_request")
    return fail(400, "IncompleteSignatureException", "Authorization header is incomplete");
  const std::string& key_id = scope_parts[0];
  auto key = keys.find(key_id);
  if (key == keys.end())
    return fail(403, "UnrecognizedClientException", "The security token included in the request is invalid.");
  if (scope_parts[3] != service)
    return fail(403, "InvalidSignatureException", "Credential should be scoped to correct service: '" + service + "'.");
  const std::string* amz_date = req.header("x-amz-date");
  if (!amz_date || amz_date->size() != 16 || amz_date->compare(0, 8, scope_parts[1]) != 0)
    return fail(403, "InvalidSignatureException", "X-Amz-Date is missing or does not match the credential scope");
  std::tm tm{};
  if (!strptime(amz_date->c_str(), "%Y%m%dT%H%M%SZ", &tm))
    return fail(403, "InvalidSignatureException", "X-Amz-Date is malformed");
  const auto skew = std::difftime(std::time(nullptr), timegm(&tm));
  if (skew > 300 || skew < -300) return fail(403, "InvalidSignatureException", "Signature expired (clock skew over 5 minutes)");

  // Canonical request. The path is encoded again as sent (SigV4 for services other than S3
  // double-encodes); the query's pairs are sorted as sent.
  std::string canonical = req.method + "\n" + uri_encode(req.path.empty() ? "/" : req.path, true) + "\n";
  std::vector<std::string> pairs;
  for (std::size_t p = 0, q; !req.query.empty() && p <= req.query.size(); p = q + 1) {
    q = req.query.find('&', p);
    if (q == std::string::npos) q = req.query.size();
    std::string pair = req.query.substr(p, q - p);
    if (pair.find('=') == std::string::npos) pair += '=';
    pairs.push_back(pair);
  }
  std::sort(pairs.begin(), pairs.end());
  for (std::size_t i = 0; i < pairs.size(); ++i) canonical += (i ? "&" : "") + pairs[i];
  canonical += "\n";
  for (std::size_t p = 0, q; p <= signed_headers.size(); p = q + 1) {
    q = signed_headers.find(';', p);
    if (q == std::string::npos) q = signed_headers.size();
    const std::string name = signed_headers.substr(p, q - p);
    std::string values;
    bool present = false;
    for (const auto& [k, v] : req.headers)
      if (k == name) {
        values += (present ? "," : "") + collapse(v);
        present = true;
      }
    // As AWS answers (e.g. libcurl before 8.3 signs an "Expect:" it was told to remove).
    if (!present)
      return fail(403, "IncompleteSignatureException",
                  "'" + name + "' is named as a SignedHeader, but it does not exist in the HTTP request");
    canonical += name + ":" + values + "\n";
  }
  canonical += "\n" + signed_headers + "\n";
  const std::string* content_hash = req.header("x-amz-content-sha256");
  canonical += content_hash ? *content_hash : sha256_hex(req.body);

  const std::string scope = scope_parts[1] + "/" + scope_parts[2] + "/" + scope_parts[3] + "/aws4_request";
  const std::string to_sign = "AWS4-HMAC-SHA256\n" + *amz_date + "\n" + scope + "\n" + sha256_hex(canonical);
  std::string k = hmac("AWS4" + key->second, scope_parts[1]);
  k = hmac(k, scope_parts[2]);
  k = hmac(k, scope_parts[3]);
  k = hmac(k, "aws4_request");
  const std::string expected = hmac(k, to_sign);
  const std::string expected_hex = hex(reinterpret_cast<const unsigned char*>(expected.data()), expected.size());
  if (expected_hex.size() != signature.size() ||
      CRYPTO_memcmp(expected_hex.data(), signature.data(), signature.size()) != 0)
    return fail(403, "InvalidSignatureException",
                "The request signature we calculated does not match the signature you provided. Check your AWS "
                "Secret Access Key and signing method.");
  sigv4_result ok;
  ok.ok = true;
  ok.status = 200;
  ok.access_key = key_id;
  return ok;
}

}  // namespace lambda_server
