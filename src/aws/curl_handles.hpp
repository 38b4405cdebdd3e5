// libcurl's handles as owned C++ types: each frees itself (curl_easy_cleanup, curl_multi_cleanup,
// curl_slist_free_all) when its owner lets go of it.
#pragma once

#include <curl/curl.h>

#include <memory>

namespace cppless::aws {

struct curl_easy_deleter {
  void operator()(CURL* e) const noexcept { curl_easy_cleanup(e); }
};
struct curl_multi_deleter {
  void operator()(CURLM* m) const noexcept { curl_multi_cleanup(m); }
};
struct curl_slist_deleter {
  void operator()(curl_slist* l) const noexcept { curl_slist_free_all(l); }
};

using easy_handle = std::unique_ptr<CURL, curl_easy_deleter>;
using multi_handle = std::unique_ptr<CURLM, curl_multi_deleter>;
using header_list = std::unique_ptr<curl_slist, curl_slist_deleter>;

}  // namespace cppless::aws
