// One request to the resource manager on behalf of a user: connect, answer the challenge with
// the user's secret, send, read the answer. Used by the lease client and `cppless lease-status`.
#pragma once

#include "net.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

namespace cppless::lease {

// The resource manager answered, and said no (authentication, resources, unknown lease).
class refused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Answers the resource manager's challenge on a fresh connection: role "client" with the user's
// secret, or "manager" with the cluster key.
void authenticate(int fd, const std::string& role, const std::string& name, const std::string& key, net::deadline until);

// Throws refused, or net::net_error when the resource manager cannot be reached or talked to.
nlohmann::json ask_as_user(const net::address& resource_manager, const std::string& user, const std::string& secret,
                           const nlohmann::json& request, std::chrono::milliseconds timeout);

}  // namespace cppless::lease
