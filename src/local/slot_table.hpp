// The host's table of calls in flight: insert, find and take by id in O(1) without a node
// allocation per call (the unordered_map it replaces cost one per call on the hot path).
//
// Slots are reused; an id carries its slot's index in the low 32 bits and the slot's use count
// in the high 32, so the id of an entry that has ended never finds the entry that reuses its
// slot (a result arriving for a call already failed by its timeout must miss). Ids are never 0.
// References stay valid until their entry is taken or erased (slots live in a deque).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cppless::local {

template <class T>
class slot_table {
 public:
  std::uint64_t insert(T&& value) {
    std::uint32_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      index = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    slot& s = slots_[index];
    ++s.uses;
    s.value.emplace(std::move(value));
    ++size_;
    return (std::uint64_t{s.uses} << 32) | index;
  }

  const T* find(std::uint64_t id) const {
    const auto index = static_cast<std::uint32_t>(id);
    if (index >= slots_.size()) return nullptr;
    const slot& s = slots_[index];
    return s.value && s.uses == static_cast<std::uint32_t>(id >> 32) ? &*s.value : nullptr;
  }
  T* find(std::uint64_t id) { return const_cast<T*>(std::as_const(*this).find(id)); }

  const T& at(std::uint64_t id) const {
    if (const T* v = find(id)) return *v;
    throw std::out_of_range("cppless local: no call with id " + std::to_string(id));
  }
  T& at(std::uint64_t id) { return const_cast<T&>(std::as_const(*this).at(id)); }

  // Removes the entry and hands it over (empty if the id has no entry).
  std::optional<T> take(std::uint64_t id) {
    T* v = find(id);
    if (!v) return std::nullopt;
    std::optional<T> out(std::move(*v));
    release(static_cast<std::uint32_t>(id));
    return out;
  }

  bool erase(std::uint64_t id) {
    if (!find(id)) return false;
    release(static_cast<std::uint32_t>(id));
    return true;
  }

  std::size_t size() const { return size_; }

 private:
  struct slot {
    std::optional<T> value;
    std::uint32_t uses = 0;  // starts at 1 with the first entry: ids are never 0
  };

  void release(std::uint32_t index) {
    slots_[index].value.reset();
    free_.push_back(index);
    --size_;
  }

  std::deque<slot> slots_;
  std::vector<std::uint32_t> free_;
  std::size_t size_ = 0;
};

}  // namespace cppless::local
