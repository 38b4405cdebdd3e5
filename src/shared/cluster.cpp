// Redis Cluster routing: the slot of a key, the slot map from CLUSTER SLOTS, MOVED/ASK parsing.
#include "cluster.hpp"

#include "connection.hpp"

#include <cppless/shared/errors.hpp>

#include <charconv>
#include <thread>

namespace cppless::shared::detail {

std::uint16_t key_slot(std::string_view key) {
  if (auto open = key.find('{'); open != std::string_view::npos) {
    auto close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) key = key.substr(open + 1, close - open - 1);
  }
  std::uint16_t crc = 0;  // CRC16-CCITT (XMODEM): polynomial 0x1021, initial 0, as Redis Cluster
  for (unsigned char c : key) {
    crc = static_cast<std::uint16_t>(crc ^ (c << 8));
    for (int bit = 0; bit < 8; ++bit)
      crc = static_cast<std::uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1);
  }
  return static_cast<std::uint16_t>(crc % cluster_slots);
}

std::optional<redirect> parse_redirect(const reply& r) {
  if (r.type != reply::kind::error) return std::nullopt;
  redirect out;
  std::string_view s = r.str;
  if (s.starts_with("MOVED ")) {
    s.remove_prefix(6);
  } else if (s.starts_with("ASK ")) {
    s.remove_prefix(4);
    out.ask = true;
  } else {
    return std::nullopt;
  }
  auto space = s.find(' ');
  auto colon = s.rfind(':');
  if (space == std::string_view::npos || colon == std::string_view::npos || colon < space) return std::nullopt;
  unsigned slot = 0;
  int port = 0;
  auto slot_text = s.substr(0, space);
  auto port_text = s.substr(colon + 1);
  if (std::from_chars(slot_text.data(), slot_text.data() + slot_text.size(), slot).ec != std::errc{} || slot >= cluster_slots)
    return std::nullopt;
  if (std::from_chars(port_text.data(), port_text.data() + port_text.size(), port).ec != std::errc{} || port <= 0 || port > 65535)
    return std::nullopt;
  out.slot = static_cast<std::uint16_t>(slot);
  out.host = std::string(s.substr(space + 1, colon - space - 1));
  out.port = port;
  return out;
}

address routing::node_address(const std::string& host, int port) const {
  address a = seed_;  // same user; the database is always 0 in a cluster
  if (!host.empty() && host != "?") a.host = host;
  a.port = port;
  a.db = 0;
  share_password(seed_, a);
  return a;
}

bool routing::load_from(const address& from, clock::time_point deadline, bool first) {
  connection c(from, password_of(from));
  try {
    c.open(deadline);
    const std::string_view argv[] = {"CLUSTER", "SLOTS"};
    reply r = c.exec(argv, std::max(milliseconds(1), std::min(process_settings().command_timeout, time_left(deadline))));
    if (r.type == reply::kind::error) {
      // A standalone server refuses the command; so does an ACL user without it, which can then
      // only use a standalone server.
      if (r.str.find("cluster support disabled") != std::string::npos || r.str.starts_with("NOPERM")) {
        if (first) mode_ = mode::standalone;
        return true;
      }
      if (first && !is_transient(r)) raise(r, from, nullptr, nullptr);
      return false;
    }
    if (r.type != reply::kind::array) return false;
    std::vector<node> nodes;
    std::array<std::int16_t, cluster_slots> owner;
    owner.fill(-1);
    auto index_of = [&](const address& a, int replicas) {
      for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].where == a) return static_cast<std::int16_t>(i);
      nodes.push_back({a, replicas});
      return static_cast<std::int16_t>(nodes.size() - 1);
    };
    for (const reply& range : r.elements) {
      // [start, end, [host, port, id, ...] (the master), [host, port, id, ...] (each replica)...]
      if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
      const long long lo = range.elements[0].integer, hi = range.elements[1].integer;
      if (lo < 0 || hi >= cluster_slots || lo > hi) continue;
      const reply& m = range.elements[2];
      std::string host = m.elements[0].str;
      if (host.empty()) host = from.host;  // a node that does not know its own address
      const long long port = m.elements[1].integer;
      if (port <= 0 || port > 65535) continue;
      const auto idx = index_of(node_address(host, static_cast<int>(port)), static_cast<int>(range.elements.size()) - 3);
      for (long long s = lo; s <= hi; ++s) owner[static_cast<std::size_t>(s)] = idx;
    }
    if (nodes.empty()) {
      if (first)
        throw server_error("cppless::shared: Redis at " + from.to_string() +
                           " runs in cluster mode but serves no slots: it is not (yet) a member of a cluster");
      return false;
    }
    nodes_ = std::move(nodes);
    owner_ = owner;
    mode_ = mode::cluster;
    refreshed_ = clock::now();
    return true;
  } catch (const connect_failure&) {
    return false;
  } catch (const io_failure&) {
    return false;
  }
}

bool routing::is_cluster(clock::time_point deadline) {
  std::lock_guard lock(m_);
  if (mode_ != mode::unknown) return mode_ == mode::cluster;
  auto delay = milliseconds(1);
  for (;;) {
    if (load_from(seed_, deadline, true)) return mode_ == mode::cluster;
    if (clock::now() + delay >= deadline)
      throw connection_error("cppless::shared: cannot connect to Redis at " + seed_.to_string() +
                             " to find out whether it is a cluster (retry budget spent)");
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, milliseconds(100));
  }
}

std::optional<address> routing::node_for(std::uint16_t slot) {
  std::lock_guard lock(m_);
  const auto i = owner_[slot];
  if (i < 0) return std::nullopt;
  return nodes_[static_cast<std::size_t>(i)].where;
}

int routing::replicas_of(const address& where) {
  std::lock_guard lock(m_);
  for (const node& n : nodes_)
    if (n.where == where) return n.replicas;
  return 0;
}

std::vector<address> routing::masters() {
  std::lock_guard lock(m_);
  std::vector<address> out;
  for (const node& n : nodes_) out.push_back(n.where);
  return out;
}

void routing::moved(std::uint16_t slot, const address& to) {
  std::lock_guard lock(m_);
  std::int16_t idx = -1;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].where == to) idx = static_cast<std::int16_t>(i);
  if (idx < 0) {
    nodes_.push_back({to, 0});
    idx = static_cast<std::int16_t>(nodes_.size() - 1);
  }
  owner_[slot] = idx;
  refreshed_ = {};  // the next refresh is not rate-limited
}

void routing::refresh_if_older(milliseconds age, clock::time_point deadline) {
  {
    std::lock_guard lock(m_);
    if (clock::now() - refreshed_ < age) return;
  }
  refresh(deadline, true);
}

void routing::refresh(clock::time_point deadline, bool force) {
  std::lock_guard lock(m_);
  if (!force && clock::now() - refreshed_ < milliseconds(50)) return;
  // Ask the known masters first (the seed may be the node that failed), then the seed.
  std::vector<address> candidates;
  for (const node& n : nodes_) candidates.push_back(n.where);
  candidates.push_back(seed_);
  const auto per_node = std::min(deadline, clock::now() + milliseconds(500));
  for (const address& a : candidates) {
    if (load_from(a, per_node, false)) return;
    if (clock::now() >= deadline) return;
  }
  refreshed_ = clock::now();  // nobody answered: do not ask again at once
}

}  // namespace cppless::shared::detail
