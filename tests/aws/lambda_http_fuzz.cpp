// libFuzzer target for the local Lambda server's request handling (tools/lambda_server/http.cpp):
// each input is sent as the bytes of one client connection — HTTP/1.1, or HTTP/2 when it starts
// with the h2c preface — to a real event loop listening on loopback, whose handler answers every
// request. The loop must survive every input (no crash, no unbounded read) and close or answer.
#include "http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

namespace {

struct server {
  lambda_server::event_loop loop;
  int port = 0;
  server() {
    port = loop.listen(0, [](lambda_server::http_request&& req, lambda_server::reply_to reply) {
      reply.send({200, {{"Content-Type", "text/plain"}}, req.method + " " + req.path + " " + std::to_string(req.body.size())});
    });
  }
};

server& the_server() {
  static server s;
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  server& s = the_server();
  // Half the inputs speak HTTP/2 (the preface first), half HTTP/1.1 as they are.
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size > 0 && (data[0] & 1)) bytes = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + bytes.substr(1);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(s.port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) __builtin_trap();
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) break;  // a full buffer: the rest is not needed to exercise the parser
    sent += static_cast<std::size_t>(n);
  }
  ::shutdown(fd, SHUT_WR);
  // Run the loop until the server has closed the connection (EOF here) or 100 ms have passed
  // (an HTTP/2 session may keep a connection open after a client's half-close).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  std::function<void()> check = [&] {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) || std::chrono::steady_clock::now() > give_up) {
        s.loop.stop();
        return;
      }
      break;
    }
    s.loop.after(std::chrono::milliseconds(1), check);
  };
  s.loop.after(std::chrono::milliseconds(0), check);
  s.loop.run();
  ::close(fd);
  return 0;
}
