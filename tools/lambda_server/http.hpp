// A small single-threaded HTTP server core for the local Lambda server: an epoll loop with
// timers and child-process reaping, and connections that speak HTTP/1.1 or HTTP/2 (h2c with
// prior knowledge, through nghttp2), detected from the first bytes. Handlers may answer later
// (an invocation waits for its function): they get a reply_to that outlives nothing it should
// not — answering a connection that went away is a no-op.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

typedef struct ssl_ctx_st SSL_CTX;

namespace lambda_server {

using steady = std::chrono::steady_clock;
using header_list = std::vector<std::pair<std::string, std::string>>;

struct http_request {
  std::string method, target, path, query;  // path and query as sent (still percent-encoded)
  header_list headers;                      // names lowercased; HTTP/2 ":authority" as "host"
  std::string body;
  bool http2 = false;
  const std::string* header(std::string_view name) const;
};

struct http_response {
  int status = 200;
  header_list headers;
  std::string body;
};

class connection;

// Where to send the answer to one request.
struct reply_to {
  std::weak_ptr<connection> conn;
  std::int32_t stream = 0;  // HTTP/2 stream id (0 for HTTP/1.1)
  void send(http_response&& response) const;
  void drop() const;  // closes the whole connection without an answer (fault injection)
  bool alive() const { return !conn.expired(); }
};

class event_loop;
using handler = std::function<void(http_request&&, reply_to)>;

class event_loop {
 public:
  event_loop();
  ~event_loop();

  // Listens on 127.0.0.1:port (0 picks a free one); returns the port. With `tls`, clients that
  // open with a TLS handshake get HTTPS; others plain HTTP on the same port.
  int listen(int port, handler on_request, SSL_CTX* tls = nullptr);
  void stop_listening(int port);

  using timer_id = std::uint64_t;
  timer_id after(steady::duration delay, std::function<void()> fn);
  void cancel(timer_id id);

  // Calls fn(pid, wait status) when a child exits (children spawned by the caller).
  void on_child_exit(std::function<void(int pid, int status)> fn) { child_exit_ = std::move(fn); }
  // Calls fn(bytes) whenever fd has data; fn(empty) at end of file (then fd is closed).
  void watch_output(int fd, std::function<void(std::string_view)> fn);
  // Reads what a watched output fd holds now, without waiting for epoll to report it: a runtime
  // writes its log before it posts its response, and the log tail must include those lines.
  void drain_output(int fd);

  void run();  // until stop(); then it may run again
  void stop() { running_ = false; }

  // Internal (connections).
  void want_write(int fd, bool on);
  void close_fd(int fd);

 private:
  struct watch {
    std::function<void(std::uint32_t events)> fn;
  };
  void add(int fd, std::uint32_t events, std::function<void(std::uint32_t)> fn);

  int epoll_ = -1, signal_fd_ = -1;
  bool running_ = true;
  std::unordered_map<int, std::shared_ptr<watch>> watches_;
  std::unordered_map<int, int> listeners_;  // port -> fd
  std::multimap<steady::time_point, std::pair<timer_id, std::function<void()>>> timers_;
  std::unordered_map<timer_id, steady::time_point> timer_index_;
  timer_id next_timer_ = 1;
  std::function<void(int, int)> child_exit_;
  std::unordered_map<int, std::shared_ptr<connection>> connections_;
  friend class connection;
};

}  // namespace lambda_server
