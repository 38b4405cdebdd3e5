// One thread per accepted connection, for servers with few connections (resource manager,
// executor manager): finished threads are joined as new ones start, and stop() shuts every open
// connection down so that no thread outlives the server waiting on a silent peer.
#pragma once

#include "net.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

namespace cppless::lease {

class connection_threads {
 public:
  ~connection_threads() { stop(); }

  // `serve` gets the connection's descriptor; it is closed here once the thread is joined (so
  // that stop() never shuts down a number the system already gave to something else).
  void start(net::fd_handle fd, std::function<void(int)> serve) {
    std::lock_guard lock(mutex_);
    join_finished();
    auto& e = entries_.emplace_back();
    e.done = std::make_shared<std::atomic<bool>>(false);
    e.fd = std::move(fd);
    e.thread = std::thread([done = e.done, serve = std::move(serve), raw = e.fd.get()] {
      serve(raw);
      done->store(true);
    });
  }

  // Accepts connections on `listener` (TCP_NODELAY), each served by `serve` on its own thread,
  // until `stopping`; then stops them all.
  void serve(int listener, const std::atomic<bool>& stopping, const std::function<void(int)>& serve_one) {
    while (!stopping) {
      pollfd p{listener, POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      net::set_nodelay(fd);
      start(net::fd_handle(fd), serve_one);
    }
    stop();
  }

  // Shuts every connection down and joins every thread.
  void stop() {
    std::list<entry> all;
    {
      std::lock_guard lock(mutex_);
      for (auto& e : entries_)
        if (!e.done->load()) ::shutdown(e.fd.get(), SHUT_RDWR);
      all.swap(entries_);
    }
    for (auto& e : all)
      if (e.thread.joinable()) e.thread.join();
  }

 private:
  struct entry {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
    net::fd_handle fd;
  };

  void join_finished() {
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::mutex mutex_;
  std::list<entry> entries_;
};

}  // namespace cppless::lease
