#include "net.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cppless::lease::net {

namespace {
std::string errno_text() { return std::strerror(errno); }

int remaining_ms(deadline until) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
  if (left <= 0) return 0;
  return left > 1'000'000 ? 1'000'000 : static_cast<int>(left);
}

// Waits for `events` on fd; false at the deadline.
bool wait_for(int fd, short events, deadline until) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int ms = remaining_ms(until);
    const int n = ::poll(&p, 1, ms);
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) throw net_error("poll: " + errno_text());
  }
}

sockaddr_in resolve(const address& where) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(where.port);
  if (where.host.empty() || where.host == "0.0.0.0") {
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    return sa;
  }
  if (::inet_pton(AF_INET, where.host.c_str(), &sa.sin_addr) == 1) return sa;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(where.host.c_str(), nullptr, &hints, &found); rc != 0 || !found)
    throw net_error("cannot resolve '" + where.host + "': " + ::gai_strerror(rc));
  sa.sin_addr = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr;
  ::freeaddrinfo(found);
  return sa;
}
}  // namespace

address parse_address(const std::string& text) {
  std::string rest = text;
  if (rest.rfind("tcp://", 0) == 0) rest = rest.substr(6);
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon + 1 >= rest.size())
    throw net_error("address '" + text + "' is not host:port (or tcp://host:port)");
  address a;
  a.host = rest.substr(0, colon);
  const std::string port = rest.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoul(port) > 65535)
    throw net_error("address '" + text + "' has no valid port");
  a.port = static_cast<std::uint16_t>(std::stoul(port));
  if (a.host.empty()) throw net_error("address '" + text + "' has no host");
  return a;
}

fd_handle& fd_handle::operator=(fd_handle&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}
fd_handle::~fd_handle() { reset(); }
void fd_handle::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void set_nonblocking(int fd, bool on) {
  int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK));
}

fd_handle listen_on(const address& where, int backlog) {
  fd_handle fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw net_error("socket: " + errno_text());
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa = resolve(where);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    throw net_error("cannot listen on " + where.text() + ": " + errno_text());
  if (::listen(fd.get(), backlog) != 0) throw net_error("listen on " + where.text() + ": " + errno_text());
  return fd;
}

address bound_address(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &sa.sin_addr, text, sizeof text);
  return address{text, ntohs(sa.sin_port)};
}

fd_handle connect_to(const address& where, std::chrono::milliseconds timeout) {
  const sockaddr_in sa = resolve(where);
  fd_handle fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) throw net_error("socket: " + errno_text());
  if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
    if (errno != EINPROGRESS) throw net_error("cannot connect to " + where.text() + ": " + errno_text());
    if (!wait_for(fd.get(), POLLOUT, after(timeout)))
      throw net_error("cannot connect to " + where.text() + ": timed out after " + std::to_string(timeout.count()) + " ms");
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) throw net_error("cannot connect to " + where.text() + ": " + std::strerror(err));
  }
  set_nonblocking(fd.get(), false);
  set_nodelay(fd.get());
  return fd;
}

void write_all(int fd, const void* data, std::size_t size, deadline until) {
  auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      size -= static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLOUT, until)) throw net_error("send timed out");
      continue;
    }
    throw net_error(std::string("send failed: ") + (n == 0 ? "connection closed" : errno_text()));
  }
}

void read_all(int fd, void* data, std::size_t size, deadline until) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::recv(fd, p, size, MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      size -= static_cast<std::size_t>(n);
      continue;
    }
    if (n == 0) throw net_error("connection closed by the peer");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_for(fd, POLLIN, until)) throw net_error("receive timed out");
      continue;
    }
    throw net_error("receive failed: " + errno_text());
  }
}

void send_message(int fd, const json& message, deadline until) {
  const std::string body = message.dump();
  if (body.size() > max_message) throw net_error("message too large");
  const std::uint32_t len = static_cast<std::uint32_t>(body.size());
  std::string frame(reinterpret_cast<const char*>(&len), sizeof len);
  frame += body;
  write_all(fd, frame.data(), frame.size(), until);
}

json receive_message(int fd, deadline until) {
  std::uint32_t len = 0;
  read_all(fd, &len, sizeof len, until);
  if (len > max_message) throw net_error("message of " + std::to_string(len) + " bytes exceeds the limit");
  std::string body(len, '\0');
  read_all(fd, body.data(), len, until);
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw net_error("malformed control message");
  return j;
}

std::string hostname() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace cppless::lease::net
