#include "s3_upload.hpp"

#include "transfer_progress.hpp"

#include <curl/curl.h>
#include <openssl/sha.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

namespace cppless::tools {

namespace {

std::string sha256_hex(const std::string& data) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d);
  std::string hex(2 * sizeof d, '0');
  for (std::size_t i = 0; i < sizeof d; ++i) std::snprintf(&hex[2 * i], 3, "%02x", d[i]);
  return hex;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// S3 error bodies are XML: <Error><Code>...</Code><Message>...</Message></Error>.
std::string xml_field(const std::string& body, const std::string& tag) {
  const auto open = body.find("<" + tag + ">");
  if (open == std::string::npos) return "";
  const auto from = open + tag.size() + 2;
  const auto close = body.find("</" + tag + ">", from);
  return close == std::string::npos ? "" : body.substr(from, close - from);
}

struct response {
  long status = 0;
  std::string body;
};

// One signed request; `body` is sent for PUT (null: no body).
response request(const aws::settings& s, const char* method, const std::string& url, const std::string* body,
                 const std::string& payload_sha, const std::string& progress_label) {
  CURL* c = curl_easy_init();
  if (!c) throw std::runtime_error("curl_easy_init failed");
  response r;
  const std::string sigv4 = "aws:amz:" + s.region + ":s3";
  curl_slist* headers = curl_slist_append(nullptr, ("x-amz-content-sha256: " + payload_sha).c_str());
  if (!s.creds.session_token.empty())
    headers = curl_slist_append(headers, ("X-Amz-Security-Token: " + s.creds.session_token).c_str());
  if (body) headers = curl_slist_append(headers, "Content-Type: application/zip");
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  if (body) {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  } else {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);  // HEAD
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4.c_str());
  curl_easy_setopt(c, CURLOPT_USERNAME, s.creds.access_key_id.c_str());
  curl_easy_setopt(c, CURLOPT_PASSWORD, s.creds.secret_access_key.c_str());
  if (!s.ca_bundle.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, s.ca_bundle.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 1800L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, +[](char* d, std::size_t a, std::size_t b, void* u) {
    static_cast<std::string*>(u)->append(d, a * b);
    return a * b;
  });
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  const bool shown = show_upload_progress(c, progress_label);
  const CURLcode rc = curl_easy_perform(c);
  if (shown) clear_progress_line();
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) throw std::runtime_error(std::string(method) + " " + url + ": " + curl_easy_strerror(rc));
  return r;
}

}  // namespace

std::string s3_object_url(const aws::settings& s, const s3_object& object) {
  std::string endpoint = env("AWS_ENDPOINT_URL_S3");
  if (endpoint.empty()) endpoint = env("AWS_ENDPOINT_URL");
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (!endpoint.empty()) return endpoint + "/" + object.bucket + "/" + object.key;
  return "https://" + object.bucket + ".s3." + s.region + ".amazonaws.com/" + object.key;
}

s3_object upload_package(const aws::settings& s, const std::string& bucket, const std::string& prefix,
                         const std::string& zip) {
  if (bucket.empty() || bucket.find('/') != std::string::npos)
    throw std::runtime_error("'" + bucket + "' is not an S3 bucket name");
  const std::string sha = sha256_hex(zip);
  s3_object object{bucket, "cppless/" + prefix + "/" + sha + ".zip"};
  const std::string url = s3_object_url(s, object);
  // The empty payload's SHA-256, which a signed HEAD carries.
  static const std::string empty_sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  const response head = request(s, "HEAD", url, nullptr, empty_sha, {});
  if (head.status == 200) {
    std::cerr << "cppless deploy: package already in s3://" << bucket << "/" << object.key << "\n";
    return object;
  }
  const response put = request(s, "PUT", url, &zip, sha, "s3://" + bucket + "/" + object.key);
  if (put.status < 200 || put.status >= 300) {
    std::string code = xml_field(put.body, "Code"), message = xml_field(put.body, "Message");
    if (code.empty()) code = "HTTP " + std::to_string(put.status);
    throw std::runtime_error("upload to s3://" + bucket + "/" + object.key + " failed: " + code +
                             (message.empty() ? "" : ": " + message));
  }
  std::cerr << "cppless deploy: uploaded " << zip.size() / 1024 << " KiB to s3://" << bucket << "/" << object.key << "\n";
  return object;
}

}  // namespace cppless::tools
