// A one-line upload progress display for libcurl transfers of the deploy commands, shown only
// when standard error is a terminal.
#pragma once

#include <curl/curl.h>

#include <cstdio>
#include <string>
#include <unistd.h>

namespace cppless::tools {

// Shows "uploading <label>: x / y KiB (z%)" while `c` runs; returns whether it does (the caller
// clears the line afterwards with clear_progress_line()). `label` must outlive the transfer.
inline bool show_upload_progress(CURL* c, const std::string& label) {
  if (label.empty() || !::isatty(2)) return false;
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &label);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION,
                   +[](void* u, curl_off_t, curl_off_t, curl_off_t ultotal, curl_off_t ulnow) -> int {
                     if (ultotal > 0)
                       std::fprintf(stderr, "\r  uploading %s: %lld / %lld KiB (%d%%)   ",
                                    static_cast<const std::string*>(u)->c_str(), static_cast<long long>(ulnow / 1024),
                                    static_cast<long long>(ultotal / 1024), static_cast<int>(100 * ulnow / ultotal));
                     return 0;
                   });
  return true;
}

inline void clear_progress_line() { std::fprintf(stderr, "\r\033[K"); }

}  // namespace cppless::tools
