#include "rm_client.hpp"

#include "token.hpp"

namespace cppless::lease {

void authenticate(int fd, const std::string& role, const std::string& name, const std::string& key, net::deadline until) {
  const nlohmann::json hello = net::receive_message(fd, until);
  const std::string nonce = hello.value("nonce", "");
  net::send_message(fd,
                    {{"type", "auth"}, {"role", role}, {"user", name},
                     {"proof", hmac_sha256_hex(key, nonce + "|" + role + "|" + name)}},
                    until);
  const nlohmann::json auth = net::receive_message(fd, until);
  if (!auth.value("ok", false)) throw refused(auth.value("error", "refused"));
}

nlohmann::json ask_as_user(const net::address& resource_manager, const std::string& user, const std::string& secret,
                           const nlohmann::json& request, std::chrono::milliseconds timeout) {
  auto fd = net::connect_to(resource_manager, timeout);
  const auto until = net::after(timeout * 2);
  authenticate(fd.get(), "client", user, secret, until);
  net::send_message(fd.get(), request, until);
  nlohmann::json reply = net::receive_message(fd.get(), until);
  if (!reply.value("ok", false)) throw refused(reply.value("error", "refused"));
  return reply;
}

}  // namespace cppless::lease
