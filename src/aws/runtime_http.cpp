#include "runtime_http.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace cppless::aws {

namespace {

// Runtime API bodies are at most 6 MB (the event) plus headers; anything far larger is not a
// Runtime API reply.
constexpr std::size_t max_reply_bytes = 64u << 20;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::size_t parse_size(std::string_view text, int base) {
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value > max_reply_bytes)
    throw runtime_http_error("Runtime API reply with an invalid length '" + std::string(text.substr(0, 32)) + "'");
  return value;
}

}  // namespace

const std::string* http_reply::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name)) return &v;
  return nullptr;
}

std::size_t parse_http_reply(std::string_view data, http_reply& out) {
  const std::size_t head_end = data.find("\r\n\r\n");
  if (head_end == std::string_view::npos) {
    if (data.size() > 64 * 1024) throw runtime_http_error("Runtime API reply with over 64 KiB of headers");
    return 0;
  }
  out = {};
  std::string_view head = data.substr(0, head_end);
  const std::size_t line_end = head.find("\r\n");
  const std::string_view status_line = head.substr(0, line_end);
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ')
    throw runtime_http_error("Runtime API reply without an HTTP/1.x status line");
  out.status = static_cast<int>(parse_size(status_line.substr(9, 3), 10));
  if (out.status < 100 || out.status > 599) throw runtime_http_error("Runtime API reply with an invalid status");
  std::string_view rest = line_end == std::string_view::npos ? std::string_view{} : head.substr(line_end + 2);
  const std::string* length = nullptr;
  bool chunked = false;
  while (!rest.empty()) {
    const std::size_t eol = rest.find("\r\n");
    const std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 2);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) throw runtime_http_error("Runtime API reply with a malformed header");
    out.headers.emplace_back(std::string(line.substr(0, colon)), std::string(trim(line.substr(colon + 1))));
  }
  for (const auto& [k, v] : out.headers) {
    if (iequals(k, "Content-Length")) length = &v;
    if (iequals(k, "Transfer-Encoding") && v.find("chunked") != std::string::npos) chunked = true;
  }
  std::size_t pos = head_end + 4;
  if (chunked) {
    for (;;) {
      const std::size_t eol = data.find("\r\n", pos);
      if (eol == std::string_view::npos) return 0;
      std::string_view size_text = data.substr(pos, eol - pos);
      size_text = trim(size_text.substr(0, size_text.find(';')));
      const std::size_t size = parse_size(size_text, 16);
      if (out.body.size() + size > max_reply_bytes) throw runtime_http_error("Runtime API reply too large");
      if (data.size() - (eol + 2) < size + 2) return 0;
      if (data.substr(eol + 2 + size, 2) != "\r\n") throw runtime_http_error("Runtime API reply with a malformed chunk");
      out.body.append(data.substr(eol + 2, size));
      pos = eol + 2 + size + 2;
      if (size == 0) return pos;  // no trailers are sent by the Runtime API
    }
  }
  const std::size_t size = length ? parse_size(*length, 10) : 0;
  if (data.size() - pos < size) return 0;
  out.body.assign(data.substr(pos, size));
  return pos + size;
}

runtime_connection::runtime_connection(std::string host_port) {
  const std::size_t colon = host_port.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == host_port.size())
    throw runtime_http_error("AWS_LAMBDA_RUNTIME_API '" + host_port + "' is not host:port");
  host_ = host_port.substr(0, colon);
  port_ = host_port.substr(colon + 1);
}

runtime_connection::~runtime_connection() { close(); }

void runtime_connection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

void runtime_connection::connect() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host_.c_str(), port_.c_str(), &hints, &found); rc != 0)
    throw runtime_http_error("Runtime API " + host_ + ":" + port_ + ": " + ::gai_strerror(rc));
  std::string why = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      fd_ = fd;
      break;
    }
    why = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (fd_ < 0) throw runtime_http_error("cannot connect to the Runtime API at " + host_ + ":" + port_ + ": " + why);
}

http_reply runtime_connection::request(std::string_view method, std::string_view path,
                                       const std::vector<std::pair<std::string, std::string>>& headers,
                                       std::string_view body, std::chrono::milliseconds limit) {
  std::string head;
  head.append(method).append(" ").append(path).append(" HTTP/1.1\r\nHost: ").append(host_).append(":").append(port_);
  head.append("\r\nContent-Length: ").append(std::to_string(body.size())).append("\r\n");
  for (const auto& [k, v] : headers) head.append(k).append(": ").append(v).append("\r\n");
  head.append("\r\n");
  // A kept-alive connection may have been closed by the peer while idle: one fresh attempt.
  const bool reused = fd_ >= 0;
  try {
    if (fd_ < 0) connect();
    return exchange(head, body, limit);
  } catch (const runtime_http_error&) {
    close();
    // Only when the peer took nothing of the exchange: a reply half-read must not make the
    // request (a response post) go out twice.
    if (!reused || replied_) throw;
  }
  connect();
  try {
    return exchange(head, body, limit);
  } catch (...) {
    close();
    throw;
  }
}

http_reply runtime_connection::exchange(const std::string& head, std::string_view body, std::chrono::milliseconds limit) {
  auto send_all = [this](std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw runtime_http_error(std::string("Runtime API connection lost while sending: ") + std::strerror(errno));
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  };
  replied_ = false;
  send_all(head);
  send_all(body);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  http_reply reply;
  for (;;) {
    if (const std::size_t used = parse_http_reply(buffer_, reply)) {
      buffer_.erase(0, used);
      if (const auto* c = reply.header("Connection"); c && iequals(*c, "close")) close();
      return reply;
    }
    if (buffer_.size() > max_reply_bytes) throw runtime_http_error("Runtime API reply too large");
    int wait_ms = -1;
    if (limit.count() > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) throw runtime_http_error("the Runtime API did not answer within " + std::to_string(limit.count()) + " ms");
      wait_ms = static_cast<int>(left.count());
    }
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) throw runtime_http_error(std::string("poll: ") + std::strerror(errno));
    if (ready == 0) continue;  // the deadline check above ends it
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) throw runtime_http_error("the Runtime API closed the connection before a complete reply");
    if (n < 0) throw runtime_http_error(std::string("Runtime API connection lost: ") + std::strerror(errno));
    replied_ = true;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace cppless::aws
