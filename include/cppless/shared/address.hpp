// cppless/shared/address.hpp — where a Redis server is, as carried by every object handle.
//
// An address is what travels inside a handle when a lambda is offloaded: host, port, database and
// ACL user — never the password. A process finds the password in its own credential registry
// (filled by store::connect) or in the environment (CPPLESS_REDIS_PASSWORD, or the password part
// of CPPLESS_REDIS when it names the same server).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cppless::shared {

struct address {
  std::string host = "127.0.0.1";
  int port = 6379;
  int db = 0;
  std::string user;  // empty: the default user (AUTH <password>)

  // "host:port", with "/db" when db != 0 and "user@" when a user is set: what error messages show.
  [[nodiscard]] std::string to_string() const;
  // The key of the per-process connection cache (one pool per distinct address).
  [[nodiscard]] std::string cache_key() const;

  friend bool operator==(const address&, const address&) = default;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(host, port, db, user);
  }
};

// A parsed redis:// URL: the address, and the password if the URL had one.
struct endpoint {
  address where;
  std::string password;
};

// redis://[[user]:password@]host[:port][/db]. Throws shared::invalid_argument naming what is wrong
// (the password is never repeated in the message).
[[nodiscard]] endpoint parse_url(std::string_view url);

}  // namespace cppless::shared
