#include "s3_upload.hpp"

#include "signed_request.hpp"

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
  signed_request head_request;
  head_request.method = "HEAD";
  head_request.url = url;
  head_request.service = "s3";
  head_request.headers = {"x-amz-content-sha256: " + empty_sha};
  const signed_response head = send(s, head_request);
  if (head.status == 200) {
    std::cerr << "cppless deploy: package already in s3://" << bucket << "/" << object.key << "\n";
    return object;
  }
  signed_request put_request;
  put_request.method = "PUT";
  put_request.url = url;
  put_request.service = "s3";
  put_request.headers = {"x-amz-content-sha256: " + sha, "Content-Type: application/zip"};
  put_request.body = &zip;
  put_request.timeout_s = 1800;
  put_request.progress_label = "s3://" + bucket + "/" + object.key;
  const signed_response put = send(s, put_request);
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
