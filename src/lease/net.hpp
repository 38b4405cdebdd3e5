// TCP plumbing shared by the lease backend's three roles (resource manager, executor manager,
// client): addresses, listening and connecting sockets, exact reads and writes with deadlines,
// and the control messages (a 4-byte length, then JSON) used everywhere off the invocation path.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace cppless::lease::net {

using json = nlohmann::json;

// Anything that went wrong on a socket: refused, reset, closed, timed out, malformed message.
class net_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct address {
  std::string host;  // numeric IPv4 or a name getaddrinfo resolves
  std::uint16_t port = 0;
  std::string text() const { return host + ":" + std::to_string(port); }
};

// "tcp://host:port", "host:port" (port 0 allowed for listening: the kernel picks one).
address parse_address(const std::string& text);

// An owned file descriptor, closed on destruction.
class fd_handle {
 public:
  fd_handle() = default;
  explicit fd_handle(int fd) : fd_(fd) {}
  fd_handle(fd_handle&& o) noexcept : fd_(o.release()) {}
  fd_handle& operator=(fd_handle&& o) noexcept;
  fd_handle(const fd_handle&) = delete;
  fd_handle& operator=(const fd_handle&) = delete;
  ~fd_handle();
  int get() const { return fd_; }
  int release() { int f = fd_; fd_ = -1; return f; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset();

 private:
  int fd_ = -1;
};

fd_handle listen_on(const address& where, int backlog = 64);
// The address a listening socket is bound to (for port 0).
address bound_address(int fd);
// Connects within `timeout`; TCP_NODELAY set. Throws net_error naming the address.
fd_handle connect_to(const address& where, std::chrono::milliseconds timeout);
void set_nodelay(int fd);
void set_nonblocking(int fd, bool on);

using deadline = std::chrono::steady_clock::time_point;
inline deadline after(std::chrono::milliseconds d) { return std::chrono::steady_clock::now() + d; }

// Exact transfers; blocking or non-blocking sockets both work (poll for readiness). Throw
// net_error on close, reset or deadline.
void write_all(int fd, const void* data, std::size_t size, deadline until);
void read_all(int fd, void* data, std::size_t size, deadline until);

inline constexpr std::size_t max_message = std::size_t{1} << 20;

void send_message(int fd, const json& message, deadline until);
json receive_message(int fd, deadline until);

// Hostname of this machine, for messages.
std::string hostname();

}  // namespace cppless::lease::net
