#include "http.hpp"

#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace lambda_server {

namespace {
constexpr std::string_view h2_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
constexpr std::size_t max_body = std::size_t{64} << 20;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 413: return "Request Entity Too Large";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}
}  // namespace

const std::string* http_request::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return &v;
  return nullptr;
}

// One client connection: HTTP/1.1 (one request at a time, keep-alive) or HTTP/2.
class connection : public std::enable_shared_from_this<connection> {
 public:
  connection(event_loop& loop, int fd, handler on_request, SSL_CTX* tls)
      : loop_(loop), fd_(fd), on_request_(std::move(on_request)), tls_ctx_(tls) {}
  ~connection() {
    if (h2_) nghttp2_session_del(h2_);
    if (ssl_) SSL_free(ssl_);  // frees the BIOs too
  }

  void readable() {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n > 0) {
        if (!decided_) {
          decided_ = true;
          // A TLS ClientHello starts with record type 22: HTTPS (ALPN picks h2 or HTTP/1.1).
          if (tls_ctx_ && static_cast<unsigned char>(buf[0]) == 0x16) start_tls();
        }
        if (!ssl_) {
          in_.append(buf, static_cast<std::size_t>(n));
          continue;
        }
        BIO_write(rbio_, buf, static_cast<int>(n));
        char plain[65536];
        for (;;) {
          const int got = SSL_read(ssl_, plain, sizeof plain);
          if (got > 0) {
            in_.append(plain, static_cast<std::size_t>(got));
            continue;
          }
          const int err = SSL_get_error(ssl_, got);
          if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) break;
          ERR_clear_error();
          close();
          return;
        }
        flush();  // handshake records
        if (closed_) return;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      close();  // EOF or error
      return;
    }
    auto self = shared_from_this();  // handlers may close us
    process();
  }

  void writable() { flush(); }

  void respond(std::int32_t stream, http_response&& r) {
    if (closed_) return;
    if (h2_) {
      auto it = streams_.find(stream);
      if (it == streams_.end()) return;  // reset by the client meanwhile
      auto& st = it->second;
      st.out = std::move(r.body);
      st.sent = 0;
      std::vector<nghttp2_nv> nva;
      std::vector<std::string> names;
      std::string status = std::to_string(r.status);
      auto nv = [](const std::string& n, const std::string& v) {
        return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(n.data())),
                          reinterpret_cast<uint8_t*>(const_cast<char*>(v.data())), n.size(), v.size(),
                          NGHTTP2_NV_FLAG_NONE};
      };
      static const std::string status_name = ":status";
      nva.push_back(nv(status_name, status));
      names.reserve(r.headers.size());
      for (auto& [k, v] : r.headers) {
        names.push_back(lower(k));
        nva.push_back(nv(names.back(), v));
      }
      st.content_length = std::to_string(st.out.size());
      static const std::string cl = "content-length";
      nva.push_back(nv(cl, st.content_length));
      nghttp2_data_provider prd{};
      prd.source.ptr = &st;
      prd.read_callback = &read_body;
      nghttp2_submit_response(h2_, stream, nva.data(), nva.size(), &prd);
      if (!in_recv_) flush();  // nghttp2 must not send from inside its own callbacks
      return;
    }
    std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) + "\r\n";
    for (auto& [k, v] : r.headers) head += k + ": " + v + "\r\n";
    head += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
    if (h1_close_) head += "Connection: close\r\n";
    head += "\r\n";
    pending_ += head;
    pending_ += r.body;
    h1_busy_ = false;
    flush();
    if (h1_close_) {
      close_after_flush_ = true;
      if (out_.empty()) close();
      return;
    }
    auto self = shared_from_this();
    process();  // the next pipelined request, if any
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    loop_.close_fd(fd_);
    loop_.connections_.erase(fd_);  // may destroy *this: nothing after
  }

 private:
  struct stream_state {
    http_request req;
    std::string out, content_length;
    std::size_t sent = 0;
  };

  static ssize_t read_body(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags,
                           nghttp2_data_source* source, void*) {
    auto* st = static_cast<stream_state*>(source->ptr);
    const std::size_t n = std::min(length, st->out.size() - st->sent);
    std::memcpy(buf, st->out.data() + st->sent, n);
    st->sent += n;
    if (st->sent == st->out.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  void process() {
    if (closed_) return;
    if (!h2_ && !h1_) {
      const std::size_t n = std::min(in_.size(), h2_preface.size());
      if (in_.compare(0, n, h2_preface.substr(0, n)) != 0) h1_ = true;
      else if (n == h2_preface.size()) start_h2();
      else return;
    }
    if (h2_) {
      in_recv_ = true;
      const auto used = nghttp2_session_mem_recv(h2_, reinterpret_cast<const uint8_t*>(in_.data()), in_.size());
      in_recv_ = false;
      if (used < 0) return close();
      in_.clear();
      flush();
      return;
    }
    parse_h1();
  }

  void start_h2() {
    nghttp2_session_callbacks* cb;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cb, [](nghttp2_session*, const nghttp2_frame* f, void* u) {
      auto* self = static_cast<connection*>(u);
      if (f->hd.type == NGHTTP2_HEADERS && f->headers.cat == NGHTTP2_HCAT_REQUEST)
        self->streams_[f->hd.stream_id].req.http2 = true;
      return 0;
    });
    nghttp2_session_callbacks_set_on_header_callback(
        cb, [](nghttp2_session*, const nghttp2_frame* f, const uint8_t* name, size_t namelen, const uint8_t* value,
               size_t valuelen, uint8_t, void* u) {
          auto* self = static_cast<connection*>(u);
          auto it = self->streams_.find(f->hd.stream_id);
          if (it == self->streams_.end()) return 0;
          std::string n(reinterpret_cast<const char*>(name), namelen), v(reinterpret_cast<const char*>(value), valuelen);
          auto& req = it->second.req;
          if (n == ":method") req.method = v;
          else if (n == ":path") req.target = v;
          else if (n == ":authority") req.headers.emplace_back("host", v);
          else if (n[0] != ':') req.headers.emplace_back(std::move(n), std::move(v));
          return 0;
        });
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
        cb, [](nghttp2_session*, uint8_t, int32_t stream, const uint8_t* data, size_t len, void* u) {
          auto* self = static_cast<connection*>(u);
          auto it = self->streams_.find(stream);
          if (it != self->streams_.end() && it->second.req.body.size() + len <= max_body)
            it->second.req.body.append(reinterpret_cast<const char*>(data), len);
          return 0;
        });
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, [](nghttp2_session*, const nghttp2_frame* f, void* u) {
      auto* self = static_cast<connection*>(u);
      if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) && (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        auto it = self->streams_.find(f->hd.stream_id);
        if (it == self->streams_.end()) return 0;
        http_request req = std::move(it->second.req);
        split_target(req);
        self->on_request_(std::move(req), reply_to{self->weak_from_this(), f->hd.stream_id});
      }
      return 0;
    });
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, [](nghttp2_session*, int32_t stream, uint32_t, void* u) {
      static_cast<connection*>(u)->streams_.erase(stream);
      return 0;
    });
    if (std::getenv("LAMBDA_SERVER_H2_DEBUG")) {
      nghttp2_session_callbacks_set_on_frame_send_callback(cb, [](nghttp2_session*, const nghttp2_frame* f, void*) {
        std::fprintf(stderr, "h2 send type=%d stream=%d flags=%d len=%zu\n", f->hd.type, f->hd.stream_id, f->hd.flags, f->hd.length);
        return 0;
      });
      nghttp2_session_callbacks_set_error_callback2(cb, [](nghttp2_session*, int code, const char* msg, size_t, void*) {
        std::fprintf(stderr, "h2 error %d %s\n", code, msg);
        return 0;
      });
      nghttp2_session_callbacks_set_on_begin_frame_callback(cb, [](nghttp2_session*, const nghttp2_frame_hd* h, void*) {
        std::fprintf(stderr, "h2 recv type=%d stream=%d flags=%d len=%zu\n", h->type, h->stream_id, h->flags, h->length);
        return 0;
      });
    }
    nghttp2_session_server_new(&h2_, cb, this);
    nghttp2_session_callbacks_del(cb);
    const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 4096},
                                               {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (1 << 24)}};
    nghttp2_submit_settings(h2_, NGHTTP2_FLAG_NONE, settings, 2);
    nghttp2_session_set_local_window_size(h2_, NGHTTP2_FLAG_NONE, 0, 1 << 28);
  }

  void start_tls() {
    ssl_ = SSL_new(tls_ctx_);
    rbio_ = BIO_new(BIO_s_mem());
    wbio_ = BIO_new(BIO_s_mem());
    SSL_set_bio(ssl_, rbio_, wbio_);
    SSL_set_accept_state(ssl_);
  }

  static void split_target(http_request& req) {
    const auto q = req.target.find('?');
    req.path = req.target.substr(0, q);
    req.query = q == std::string::npos ? std::string() : req.target.substr(q + 1);
  }

  void parse_h1() {
    while (!h1_busy_ && !closed_) {
      const auto end = in_.find("\r\n\r\n");
      if (end == std::string::npos) {
        if (in_.size() > 65536) return close();
        return;
      }
      http_request req;
      std::string_view head(in_.data(), end);
      auto line_end = head.find("\r\n");
      std::string_view line = head.substr(0, line_end);
      auto sp1 = line.find(' '), sp2 = line.rfind(' ');
      if (sp1 == std::string_view::npos || sp2 == sp1) return close();
      req.method = line.substr(0, sp1);
      req.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
      const bool http10 = line.substr(sp2 + 1) == "HTTP/1.0";
      std::size_t pos = line_end == std::string_view::npos ? head.size() : line_end + 2;
      while (pos < head.size()) {
        auto e = head.find("\r\n", pos);
        if (e == std::string_view::npos) e = head.size();
        std::string_view h = head.substr(pos, e - pos);
        pos = e + 2;
        auto colon = h.find(':');
        if (colon == std::string_view::npos) continue;
        std::string_view v = h.substr(colon + 1);
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
        while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
        req.headers.emplace_back(lower(h.substr(0, colon)), std::string(v));
      }
      std::size_t body_at = end + 4;
      const std::string* te = req.header("transfer-encoding");
      if (te && lower(*te).find("chunked") != std::string::npos) {
        // Chunked body: complete only once the final zero-size chunk arrived.
        std::size_t p = body_at;
        std::string body;
        for (;;) {
          auto le = in_.find("\r\n", p);
          if (le == std::string::npos) return;
          const std::size_t size = std::strtoull(in_.c_str() + p, nullptr, 16);
          if (size == 0) {
            auto fin = in_.find("\r\n", le + 2);
            if (fin == std::string::npos) return;
            p = fin + 2;
            break;
          }
          if (in_.size() < le + 2 + size + 2) return;
          body.append(in_, le + 2, size);
          p = le + 2 + size + 2;
        }
        req.body = std::move(body);
        in_.erase(0, p);
      } else {
        const std::string* cl = req.header("content-length");
        const std::size_t length = cl ? std::strtoull(cl->c_str(), nullptr, 10) : 0;
        if (length > max_body) return close();
        if (in_.size() < body_at + length) {
          // A client that asked may send the body now (curl does for bodies over 1 MB).
          const std::string* expect = req.header("expect");
          if (expect && lower(*expect) == "100-continue" && !h1_continued_) {
            h1_continued_ = true;
            pending_ += "HTTP/1.1 100 Continue\r\n\r\n";
            flush();
          }
          return;
        }
        h1_continued_ = false;
        req.body.assign(in_, body_at, length);
        in_.erase(0, body_at + length);
      }
      const std::string* conn = req.header("connection");
      h1_close_ = http10 ? !(conn && lower(*conn) == "keep-alive") : (conn && lower(*conn) == "close");
      split_target(req);
      h1_busy_ = true;
      on_request_(std::move(req), reply_to{weak_from_this(), 0});
    }
  }

  void flush() {
    if (closed_) return;
    if (h2_) {
      for (;;) {
        const uint8_t* data;
        const auto n = nghttp2_session_mem_send(h2_, &data);
        if (n <= 0) break;
        pending_.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
      }
    }
    if (ssl_) {
      if (!pending_.empty()) {
        const int n = SSL_write(ssl_, pending_.data(), static_cast<int>(pending_.size()));
        if (n > 0) pending_.erase(0, static_cast<std::size_t>(n));
        else if (const int err = SSL_get_error(ssl_, n); err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
          ERR_clear_error();
          return close();
        }
      }
      char buf[65536];
      for (int n; (n = BIO_read(wbio_, buf, sizeof buf)) > 0;) out_.append(buf, static_cast<std::size_t>(n));
    } else {
      out_ += pending_;
      pending_.clear();
    }
    while (!out_.empty()) {
      const ssize_t n = ::send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL);
      if (n > 0) {
        out_.erase(0, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      return close();
    }
    // epoll_ctl only when the interest changes: most flushes empty out_ right away, and a call
    // each time was five system calls per invocation in the server's profile.
    if (const bool want = !out_.empty(); want != watching_writes_) {
      watching_writes_ = want;
      loop_.want_write(fd_, want);
    }
    if (out_.empty() && close_after_flush_) close();
    else if (h2_ && !nghttp2_session_want_read(h2_) && !nghttp2_session_want_write(h2_) && out_.empty()) close();
  }

  event_loop& loop_;
  int fd_;
  handler on_request_;
  std::string in_, out_, pending_;  // in_/pending_: plaintext; out_: bytes for the socket
  SSL_CTX* tls_ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  BIO *rbio_ = nullptr, *wbio_ = nullptr;
  bool decided_ = false;
  bool closed_ = false, in_recv_ = false, h1_ = false, h1_busy_ = false, h1_close_ = false, close_after_flush_ = false;
  bool h1_continued_ = false;  // "100 Continue" sent for the request being received
  bool watching_writes_ = false;  // EPOLLOUT is in the socket's epoll interest
  nghttp2_session* h2_ = nullptr;
  std::unordered_map<std::int32_t, stream_state> streams_;
  friend struct reply_to;
};

void reply_to::send(http_response&& response) const {
  if (auto c = conn.lock()) c->respond(stream, std::move(response));
}

void reply_to::drop() const {
  if (auto c = conn.lock()) c->close();
}

event_loop::event_loop() {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);  // children are reaped through the signalfd
  signal_fd_ = ::signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  add(signal_fd_, EPOLLIN, [this](std::uint32_t) {
    signalfd_siginfo info;
    while (::read(signal_fd_, &info, sizeof info) == sizeof info) {
    }
    int status = 0;
    for (pid_t pid; (pid = ::waitpid(-1, &status, WNOHANG)) > 0;)
      if (child_exit_) child_exit_(pid, status);
  });
}

event_loop::~event_loop() {
  connections_.clear();
  for (auto& [fd, w] : watches_) ::close(fd);
  ::close(epoll_);
}

void event_loop::add(int fd, std::uint32_t events, std::function<void(std::uint32_t)> fn) {
  auto w = std::make_shared<watch>();
  w->fn = std::move(fn);
  watches_[fd] = w;
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
}

void event_loop::want_write(int fd, bool on) {
  epoll_event ev{};
  ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
  ev.data.fd = fd;
  ::epoll_ctl(epoll_, EPOLL_CTL_MOD, fd, &ev);
}

void event_loop::close_fd(int fd) {
  ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
  watches_.erase(fd);
  ::close(fd);
}

int event_loop::listen(int port, handler on_request, SSL_CTX* tls) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1024) != 0) {
    ::close(fd);
    throw std::runtime_error(std::string("cannot listen on 127.0.0.1:") + std::to_string(port) + ": " + std::strerror(errno));
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int bound = ntohs(addr.sin_port);
  listeners_[bound] = fd;
  auto shared_handler = std::make_shared<handler>(std::move(on_request));
  add(fd, EPOLLIN, [this, fd, shared_handler, tls](std::uint32_t) {
    for (;;) {
      const int c = ::accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (c < 0) break;
      const int nodelay = 1;
      ::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
      auto conn = std::make_shared<connection>(*this, c, *shared_handler, tls);
      connections_[c] = conn;
      add(c, EPOLLIN, [weak = std::weak_ptr<connection>(conn)](std::uint32_t events) {
        auto self = weak.lock();
        if (!self) return;
        if (events & EPOLLOUT) self->writable();
        if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) self->readable();
      });
    }
  });
  return bound;
}

void event_loop::stop_listening(int port) {
  auto it = listeners_.find(port);
  if (it == listeners_.end()) return;
  close_fd(it->second);
  listeners_.erase(it);
}

event_loop::timer_id event_loop::after(steady::duration delay, std::function<void()> fn) {
  const auto id = next_timer_++;
  const auto at = steady::now() + delay;
  timers_.emplace(at, std::make_pair(id, std::move(fn)));
  timer_index_[id] = at;
  return id;
}

void event_loop::cancel(timer_id id) {
  auto it = timer_index_.find(id);
  if (it == timer_index_.end()) return;
  auto [b, e] = timers_.equal_range(it->second);
  for (auto t = b; t != e; ++t)
    if (t->second.first == id) {
      timers_.erase(t);
      break;
    }
  timer_index_.erase(it);
}

void event_loop::watch_output(int fd, std::function<void(std::string_view)> fn) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  add(fd, EPOLLIN, [this, fd, fn = std::move(fn)](std::uint32_t) {
    char buf[16384];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) {
        fn(std::string_view(buf, static_cast<std::size_t>(n)));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      auto keep = fn;  // close_fd destroys this lambda
      close_fd(fd);
      keep({});
      return;
    }
  });
}

void event_loop::drain_output(int fd) {
  auto it = watches_.find(fd);
  if (it == watches_.end()) return;
  auto w = it->second;
  w->fn(EPOLLIN);
}

void event_loop::run() {
  epoll_event events[256];
  while (running_) {
    int timeout = -1;
    if (!timers_.empty()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(timers_.begin()->first - steady::now()).count();
      timeout = static_cast<int>(std::clamp<long long>(left, 0, 60000));
    }
    const int n = ::epoll_wait(epoll_, events, 256, timeout);
    for (int i = 0; i < n; ++i) {
      auto it = watches_.find(events[i].data.fd);
      if (it == watches_.end()) continue;
      auto w = it->second;  // keeps the callback alive while it runs
      w->fn(events[i].events);
    }
    const auto now = steady::now();
    while (!timers_.empty() && timers_.begin()->first <= now) {
      auto fn = std::move(timers_.begin()->second.second);
      timer_index_.erase(timers_.begin()->second.first);
      timers_.erase(timers_.begin());
      fn();
    }
  }
  running_ = true;  // a later run() serves again (the fuzzer runs the loop once per input)
}

}  // namespace lambda_server
