// cppless/callback.hpp — a move-only function wrapper with room for its target inside.
//
// Every dispatched call carries one completion from submit() to the backend and back. With
// std::function (16 bytes of inline room in libstdc++) the typical completion — a weak_ptr, a
// call id and a result sink — is a heap allocation per call; measured on the hot local path,
// that was the largest single cost after the clock reads. callback keeps targets of up to
// `Inline` bytes in place (larger ones on the heap) and, being move-only, accepts lambdas that
// own move-only state. The call operator is const like std::function's.
#pragma once

#include <cstddef>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

namespace cppless {

namespace detail {
template <class T>
inline constexpr bool is_std_function = false;
template <class S>
inline constexpr bool is_std_function<std::function<S>> = true;
}  // namespace detail

template <class Signature, std::size_t Inline = 64>
class callback;

template <class R, class... Args, std::size_t Inline>
class callback<R(Args...), Inline> {
 public:
  callback() noexcept = default;
  callback(std::nullptr_t) noexcept {}

  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, callback> && std::is_invocable_r_v<R, std::decay_t<F>&, Args...>)
  callback(F&& f) {  // NOLINT(google-explicit-constructor): converts like std::function
    using T = std::decay_t<F>;
    if constexpr (std::is_pointer_v<T> || std::is_member_pointer_v<T> || detail::is_std_function<T>) {
      if (!f) return;  // an empty target makes an empty callback, as with std::function
    }
    if constexpr (fits_inline<T>) {
      ::new (static_cast<void*>(storage_)) T(std::forward<F>(f));
      ops_ = &inline_ops<T>;
    } else {
      ::new (static_cast<void*>(storage_)) T*(new T(std::forward<F>(f)));
      ops_ = &heap_ops<T>;
    }
  }

  callback(callback&& other) noexcept { take(other); }
  callback& operator=(callback&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  callback& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  callback(const callback&) = delete;
  callback& operator=(const callback&) = delete;
  ~callback() { reset(); }

  explicit operator bool() const noexcept { return ops_ != nullptr; }

  R operator()(Args... args) const {
    if (!ops_) throw std::bad_function_call();
    return ops_->call(storage_, std::forward<Args>(args)...);
  }

 private:
  struct operations {
    R (*call)(void* target, Args&&... args);
    void (*move_to)(void* from, void* to) noexcept;  // leaves `from` destroyed
    void (*destroy)(void* target) noexcept;
  };

  template <class T>
  static constexpr bool fits_inline = sizeof(T) <= Inline && alignof(T) <= alignof(std::max_align_t) &&
                                      std::is_nothrow_move_constructible_v<T>;

  template <class T>
  static constexpr operations inline_ops{
      [](void* t, Args&&... args) -> R { return std::invoke(*static_cast<T*>(t), std::forward<Args>(args)...); },
      [](void* from, void* to) noexcept {
        ::new (to) T(std::move(*static_cast<T*>(from)));
        static_cast<T*>(from)->~T();
      },
      [](void* t) noexcept { static_cast<T*>(t)->~T(); }};

  template <class T>
  static constexpr operations heap_ops{
      [](void* t, Args&&... args) -> R { return std::invoke(**static_cast<T**>(t), std::forward<Args>(args)...); },
      [](void* from, void* to) noexcept { ::new (to) T*(*static_cast<T**>(from)); },
      [](void* t) noexcept { delete *static_cast<T**>(t); }};

  void take(callback& other) noexcept {
    if (!other.ops_) return;
    other.ops_->move_to(other.storage_, storage_);
    ops_ = std::exchange(other.ops_, nullptr);
  }
  void reset() noexcept {
    if (ops_) std::exchange(ops_, nullptr)->destroy(storage_);
  }

  alignas(std::max_align_t) mutable std::byte storage_[Inline];
  const operations* ops_ = nullptr;
};

}  // namespace cppless
