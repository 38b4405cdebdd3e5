// cppless/shared/store.hpp — the entry point: a Redis server and one run's namespace, from which
// named shared objects are opened.
//
//   auto store = cppless::shared::store::from_env();      // CPPLESS_REDIS, a fresh namespace
//   auto best = store.best<int, std::vector<int>>("best", cppless::shared::maximize);
//   auto visited = store.counter("visited");
//   auto task = [best, visited] { ... };                  // handles travel with the function
//
// Opening an object creates it if its name is free, or checks that what is there is the same
// kind of object over the same C++ types (and parameters); otherwise type_mismatch. Handles are
// small values (address, namespace, name): copy them, capture them, send them; in another process
// they connect on first use. A store is itself serializable, so functions can open objects too.
#pragma once

#include <cppless/shared/atomic.hpp>
#include <cppless/shared/barrier.hpp>
#include <cppless/shared/byte_array.hpp>
#include <cppless/shared/best.hpp>
#include <cppless/shared/client.hpp>
#include <cppless/shared/codec.hpp>
#include <cppless/shared/counter.hpp>
#include <cppless/shared/custom.hpp>
#include <cppless/shared/latch.hpp>
#include <cppless/shared/list.hpp>
#include <cppless/shared/map.hpp>
#include <cppless/shared/queue.hpp>
#include <cppless/shared/semaphore.hpp>
#include <cppless/shared/write_once.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace cppless::shared {

class store {
 public:
  store() = default;  // unbound (for deserialization); use from_env or connect

  // CPPLESS_REDIS (default redis://127.0.0.1:6379) and a fresh namespace "cppless:<random>", or
  // CPPLESS_REDIS_NAMESPACE when set (to join the namespace of another run). Checks that the
  // server answers: connection_error / auth_error otherwise.
  static store from_env();
  // url: redis://[[user]:password@]host[:port][/db]; ns empty: a fresh namespace.
  static store connect(std::string_view url, std::string ns = {});
  // A fresh namespace name, "cppless:" followed by 16 random hex digits.
  static std::string fresh_namespace();

  [[nodiscard]] const std::string& ns() const noexcept { return ns_; }
  [[nodiscard]] const address& where() const noexcept { return addr_; }

  shared::counter counter(std::string_view name) const;
  template <class T>
  shared::atomic<T> atomic(std::string_view name, const T& initial = T{}) const {
    shared::atomic<T> a(ref(name));
    const std::string v = detail::encode(initial);
    detail::open_object(a.ref(), a.kind(), {}, {{"v", v}});
    return a;
  }
  template <numeric V, class P>
  shared::best<V, P> best(std::string_view name, direction goal) const {
    shared::best<V, P> b(ref(name), goal);
    detail::open_object(b.ref(), b.kind_for(goal), {});
    return b;
  }
  // parties >= 1; opening an existing barrier with another party count is a type_mismatch.
  shared::barrier barrier(std::string_view name, int parties) const;
  // The count applies when the latch is created (an existing latch keeps its own).
  shared::latch latch(std::string_view name, std::int64_t count) const;
  // The permits apply when the semaphore is created.
  shared::semaphore semaphore(std::string_view name, std::int64_t permits) const;
  template <class T>
  shared::write_once<T> write_once(std::string_view name) const {
    shared::write_once<T> f(ref(name));
    detail::open_object(f.ref(), f.kind(), {}, {{"has", "0"}});
    return f;
  }
  template <class T>
  [[deprecated("renamed store::write_once")]] shared::write_once<T> future(std::string_view name) const {
    return write_once<T>(name);
  }
  template <class K, class V>
  shared::map<K, V> map(std::string_view name) const {
    shared::map<K, V> m(ref(name));
    detail::open_object(m.ref(), m.kind(), {}, {{"n", "0"}});
    return m;
  }
  // Loads a user-defined type's operations into the server (every master of a cluster), replacing
  // an earlier definition; operation_error if Redis refuses the code.
  void define(const object_type& type) const;
  // Opens an object of a defined type (created empty: a hash with no fields of the user's).
  shared::custom_object custom(std::string_view type, std::string_view name) const;
  template <class T>
  shared::list<T> list(std::string_view name) const {
    shared::list<T> l(ref(name));
    detail::open_object(l.ref(), l.kind(), {});
    return l;
  }
  // size >= 1 bytes, all 0 when created; opening an existing array with another size is a
  // type_mismatch.
  shared::byte_array byte_array(std::string_view name, std::int64_t size) const;
  template <class T>
  shared::queue<T> queue(std::string_view name) const {
    shared::queue<T> q(ref(name));
    detail::open_object(q.ref(), q.kind(), {});
    return q;
  }

  // Deletes every key of the namespace (all its objects); returns how many keys there were.
  std::size_t remove_namespace() const;
  // Objects outlive a run when their namespace is named (connect(url, "my-project")) and not
  // removed. These give such a namespace an expiry: every key now in it expires `ttl` from now
  // (objects created later do not: call again), or no longer expires. Return the keys changed.
  std::size_t expire_namespace(milliseconds ttl) const;
  std::size_t persist_namespace() const;
  // One PING round trip (checks that the server answers).
  void ping() const;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(addr_, ns_);
  }

 private:
  store(address addr, std::string ns) : addr_(std::move(addr)), ns_(std::move(ns)) {}
  [[nodiscard]] detail::object_ref ref(std::string_view name) const;

  address addr_;
  std::string ns_;
};

}  // namespace cppless::shared
