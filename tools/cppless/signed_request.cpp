#include "signed_request.hpp"

#include <curl/curl.h>

#include <cstdio>
#include <stdexcept>
#include <unistd.h>

namespace cppless::tools {

namespace {

int show_progress(void* label, curl_off_t, curl_off_t, curl_off_t total, curl_off_t now) {
  if (total > 0)
    std::fprintf(stderr, "\r  uploading %s: %lld / %lld KiB (%d%%)   ", static_cast<const std::string*>(label)->c_str(),
                 static_cast<long long>(now / 1024), static_cast<long long>(total / 1024),
                 static_cast<int>(100 * now / total));
  return 0;
}

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

}  // namespace

signed_response send(const aws::settings& s, const signed_request& request) {
  static const bool initialized = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  CURL* c = initialized ? curl_easy_init() : nullptr;
  if (!c) throw std::runtime_error(request.method + " " + request.url + ": libcurl could not be initialised");
  signed_response r;
  const std::string sigv4 = "aws:amz:" + s.region + ":" + request.service;
  curl_slist* headers = nullptr;
  for (const auto& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  if (!s.creds.session_token.empty())
    headers = curl_slist_append(headers, ("X-Amz-Security-Token: " + s.creds.session_token).c_str());
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  if (request.method == "HEAD") curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  else curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (request.body) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body->data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body->size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_AWS_SIGV4, sigv4.c_str());
  curl_easy_setopt(c, CURLOPT_USERNAME, s.creds.access_key_id.c_str());
  curl_easy_setopt(c, CURLOPT_PASSWORD, s.creds.secret_access_key.c_str());
  const std::string fallback = s.ca_bundle.empty() ? aws::fallback_ca_bundle(curl_version_info(CURLVERSION_NOW)->cainfo) : "";
  if (!s.ca_bundle.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, s.ca_bundle.c_str());
  else if (!fallback.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, fallback.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT, request.timeout_s);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &append_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
  const bool show = !request.progress_label.empty() && ::isatty(2);
  if (show) {
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &request.progress_label);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &show_progress);
  }
  const CURLcode rc = curl_easy_perform(c);
  if (show) std::fprintf(stderr, "\r\033[K");
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) throw std::runtime_error(request.method + " " + request.url + ": " + curl_easy_strerror(rc));
  return r;
}

}  // namespace cppless::tools
