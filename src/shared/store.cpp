// store: connecting (URL, credentials, namespace), opening the non-template objects, and removing
// a namespace.
#include "cluster.hpp"

#include <cppless/shared/errors.hpp>
#include <cppless/shared/store.hpp>

#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <vector>

namespace cppless::shared {

std::string store::fresh_namespace() {
  std::random_device rd;
  return "cppless:" + detail::hex64((std::uint64_t{rd()} << 32) ^ rd());
}

store store::from_env() {
  const char* url = std::getenv("CPPLESS_REDIS");
  const char* ns = std::getenv("CPPLESS_REDIS_NAMESPACE");
  return connect(url != nullptr && *url != '\0' ? url : "redis://127.0.0.1:6379", ns != nullptr ? ns : "");
}

store store::connect(std::string_view url, std::string ns) {
  endpoint ep = parse_url(url);
  if (ns.empty()) ns = fresh_namespace();
  detail::check_name(ns, "namespace");
  std::optional<std::optional<std::string>> replaced;
  if (!ep.password.empty()) replaced = detail::swap_password(ep.where, std::move(ep.password));
  store s(std::move(ep.where), std::move(ns));
  try {
    s.ping();  // fail here, with the address in the message, rather than at the first object
  } catch (const auth_error&) {
    // A rejected password is not kept: the next connection to this address is not refused for it.
    if (replaced) detail::swap_password(s.addr_, std::move(*replaced));
    throw;
  }
  return s;
}

detail::object_ref store::ref(std::string_view name) const {
  if (ns_.empty()) throw invalid_argument("cppless::shared: this store is not connected (use store::from_env or store::connect)");
  detail::check_name(name, "object name");
  return detail::object_ref{addr_, ns_, std::string(name)};
}

shared::counter store::counter(std::string_view name) const {
  shared::counter c(ref(name));
  detail::open_object(c.ref(), c.kind(), {}, {{"v", "0"}});
  return c;
}

shared::barrier store::barrier(std::string_view name, int parties) const {
  if (parties < 1) throw invalid_argument("cppless::shared: a barrier needs at least 1 party (got " + std::to_string(parties) + ")");
  shared::barrier b(ref(name), parties);
  const std::string p = std::to_string(parties);
  detail::open_object(b.ref(), b.kind(), {{"parties", p}}, {{"arrived", "0"}, {"gen", "0"}});
  return b;
}

shared::latch store::latch(std::string_view name, std::int64_t count) const {
  if (count < 0) throw invalid_argument("cppless::shared: a latch count must be >= 0 (got " + std::to_string(count) + ")");
  shared::latch l(ref(name));
  const std::string c = std::to_string(count);
  detail::open_object(l.ref(), l.kind(), {}, {{"count", c}});
  return l;
}

shared::semaphore store::semaphore(std::string_view name, std::int64_t permits) const {
  if (permits < 0) throw invalid_argument("cppless::shared: semaphore permits must be >= 0 (got " + std::to_string(permits) + ")");
  shared::semaphore s(ref(name));
  const std::string p = std::to_string(permits);
  detail::open_object(s.ref(), s.kind(), {}, {{"permits", p}});
  return s;
}

shared::byte_array store::byte_array(std::string_view name, std::int64_t size) const {
  constexpr std::int64_t max_size = std::int64_t{512} * 1024 * 1024;  // one Redis string
  if (size < 1 || size > max_size)
    throw invalid_argument("cppless::shared: a byte array needs 1 to 512 MiB bytes (got " + std::to_string(size) + ")");
  shared::byte_array a(ref(name), size);
  const std::string n = std::to_string(size);
  detail::open_object(a.ref(), a.kind(), {{"size", n}});
  return a;
}

void store::ping() const {
  if (ns_.empty()) throw invalid_argument("cppless::shared: this store is not connected (use store::from_env or store::connect)");
  detail::session ses(addr_);
  ses.command({"PING"});
}

namespace {

// Calls each(session, keys of one slot) for every key of the namespace, on every master.
void for_each_key(const address& where, const std::string& ns,
                  const std::function<void(detail::session&, const std::vector<std::string_view>&)>& each) {
  // The namespace has no glob characters (check_name refuses them), so the pattern matches exactly
  // its keys: objects, their auxiliary values and the call records. On a cluster, every master
  // holds some; keys handled together must share a slot.
  const std::string pattern = "{" + ns + ":*";
  for (const address& node : detail::session::nodes_of(where)) {
    detail::session ses(node, detail::session::pinned_t{});
    std::string cursor = "0";
    do {
      detail::reply r = ses.command({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
      cursor = r.str_at(0);
      if (r.elements.size() < 2) break;
      std::map<std::uint16_t, std::vector<std::string_view>> by_slot;
      for (const auto& k : r.elements[1].elements) by_slot[detail::key_slot(k.str)].emplace_back(k.str);
      for (auto& [slot, keys] : by_slot) each(ses, keys);
    } while (cursor != "0");
  }
}

}  // namespace

std::size_t store::remove_namespace() const {
  if (ns_.empty()) return 0;
  std::size_t removed = 0;
  for_each_key(addr_, ns_, [&](detail::session& ses, const std::vector<std::string_view>& keys) {
    std::vector<std::string_view> argv{"UNLINK"};
    argv.insert(argv.end(), keys.begin(), keys.end());
    removed += static_cast<std::size_t>(ses.raw(argv).integer);
  });
  return removed;
}

std::size_t store::expire_namespace(milliseconds ttl) const {
  if (ns_.empty()) return 0;
  if (ttl <= milliseconds(0)) throw invalid_argument("cppless::shared: expire_namespace needs a positive time to live");
  const std::string ms = std::to_string(ttl.count());
  std::size_t touched = 0;
  for_each_key(addr_, ns_, [&](detail::session& ses, const std::vector<std::string_view>& keys) {
    for (std::string_view k : keys) {
      // LT: keys that already expire sooner (call records, wake-up tokens) keep their time.
      std::string_view argv[] = {"PEXPIRE", k, ms, "LT"};
      touched += static_cast<std::size_t>(ses.raw(argv).integer);
    }
  });
  return touched;
}

std::size_t store::persist_namespace() const {
  if (ns_.empty()) return 0;
  std::size_t touched = 0;
  for_each_key(addr_, ns_, [&](detail::session& ses, const std::vector<std::string_view>& keys) {
    for (std::string_view k : keys) {
      // Bookkeeping keeps expiring: call records (r...), waiters' tokens (t...) and barrier
      // wake-up lists (w<generation>). Objects and their data (items, bytes, waiters) persist.
      if (auto at = k.find('\x1f'); at != std::string_view::npos && at + 1 < k.size()) {
        const char kind = k[at + 1];
        const bool generation = kind == 'w' && at + 2 < k.size() && k[at + 2] >= '0' && k[at + 2] <= '9';
        if (kind == 'r' || kind == 't' || generation) continue;
      }
      std::string_view argv[] = {"PERSIST", k};
      touched += static_cast<std::size_t>(ses.raw(argv).integer);
    }
  });
  return touched;
}

}  // namespace cppless::shared
