// Parsing redis:// URLs and naming addresses in messages.
#include <cppless/shared/address.hpp>
#include <cppless/shared/errors.hpp>

#include <charconv>

namespace cppless::shared {

std::string address::to_string() const {
  std::string s;
  if (!user.empty()) s += user + "@";
  s += host + ":" + std::to_string(port);
  if (db != 0) s += "/" + std::to_string(db);
  return s;
}

std::string address::cache_key() const { return user + "@" + host + ":" + std::to_string(port) + "/" + std::to_string(db); }

namespace {

int parse_number(std::string_view text, int lo, int hi, std::string_view what, std::string_view shown) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < lo || value > hi)
    throw invalid_argument("cppless::shared: bad " + std::string(what) + " '" + std::string(text) + "' in Redis URL '" +
                           std::string(shown) + "'");
  return value;
}

}  // namespace

endpoint parse_url(std::string_view url) {
  constexpr std::string_view scheme = "redis://";
  endpoint ep;
  if (url.substr(0, scheme.size()) != scheme)
    // Not echoed: a malformed URL may still hold a password.
    throw invalid_argument("cppless::shared: a Redis URL must look like redis://[[user]:password@]host[:port][/db]");
  std::string_view rest = url.substr(scheme.size());
  // The URL as it may be shown: everything but the credentials.
  std::string shown(scheme);
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view cred = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (auto colon = cred.find(':'); colon != std::string_view::npos) {
      ep.where.user = std::string(cred.substr(0, colon));
      ep.password = std::string(cred.substr(colon + 1));
    } else {
      ep.password = std::string(cred);  // redis://password@host, as some clients accept
    }
    shown += (ep.where.user.empty() ? std::string() : ep.where.user + ":") + "***@";
  }
  shown += std::string(rest);
  std::string_view hostport = rest;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    hostport = rest.substr(0, slash);
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty()) ep.where.db = parse_number(db, 0, 1 << 20, "database number", shown);
  }
  if (auto colon = hostport.rfind(':'); colon != std::string_view::npos && hostport.find(']') == std::string_view::npos) {
    ep.where.host = std::string(hostport.substr(0, colon));
    ep.where.port = parse_number(hostport.substr(colon + 1), 1, 65535, "port", shown);
  } else {
    ep.where.host = std::string(hostport);
  }
  if (ep.where.host.empty()) throw invalid_argument("cppless::shared: no host in Redis URL '" + shown + "'");
  return ep;
}

}  // namespace cppless::shared
