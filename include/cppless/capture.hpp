// cppless/capture.hpp — sending a closure's captures to another process, without a compiler fork.
//
// Clang (15+): __builtin_dump_struct(&closure, visitor) calls the visitor once per field, in
// declaration order: scalar fields as lvalues, class-type fields as a pointer to the field
// (format "*%p"), raw pointers by value (format "%p"), aggregates recursed into. The visitor
// template is instantiated per capture type, so a capture that cannot be serialized is a
// compile-time error. A reference capture arrives as a pointer to an object outside the closure,
// a raw pointer (or `this`) with format "%p": both are refused with capture_error, never sent.
// On the worker the closure is rebuilt in aligned storage field by field.
//
// Other compilers: closures must be trivially copyable (copied as bytes, guarded by the
// fingerprint); anything else is a compile-time error saying so. Function objects with a
// cereal-style serialize() member are serialized through it on every compiler.
//
// Limits (docs/reflection.md): bit-fields and unions inside captured aggregates are not
// supported (pass such values as arguments); nested closures are captured only if trivially
// copyable on GCC, and not at all on Clang unless they have a serialize() member.
#pragma once

#include <cppless/archive.hpp>
#include <cppless/error.hpp>
#include <cppless/identity.hpp>

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace cppless::detail {

#if defined(__clang__) && __clang_major__ >= 15
inline constexpr bool has_capture_reflection = true;
#else
inline constexpr bool has_capture_reflection = false;
#endif

template <class>
inline constexpr bool dependent_false = false;

// Instantiated (and failing) only for a capture type that cannot travel; the compiler's
// "required from" note names the type.
template <class T>
struct capture_not_serializable {
  static_assert(dependent_false<T>,
                "cppless: a lambda capture is not serializable. Give its type a serialize(Archive&) member "
                "(cereal convention), capture a serializable copy instead (e.g. std::string for a "
                "string_view), or pass the value as an argument of dispatch.");
};

template <class T>
struct closure_not_trivially_copyable {
  static_assert(dependent_false<T>,
                "cppless: without Clang's capture reflection, an offloaded closure must be trivially "
                "copyable. Capture only trivially copyable values, or pass the other values as arguments "
                "of dispatch, or build with Clang 15+.");
};

template <class T>
struct capture_not_default_constructible {
  static_assert(dependent_false<T>,
                "cppless: a captured class type must be default constructible so the worker can rebuild "
                "the closure; pass the value as an argument instead.");
};

enum class closure_strategy { user_serialize, reflect, bytes };

template <class F>
constexpr closure_strategy strategy_for() {
  if constexpr (is_serializable_v<F> && std::is_default_constructible_v<F>) {
    return closure_strategy::user_serialize;
  } else if constexpr (has_capture_reflection) {
    return closure_strategy::reflect;
  } else {
    if constexpr (!std::is_trivially_copyable_v<F>) (void)sizeof(closure_not_trivially_copyable<F>);
    return closure_strategy::bytes;
  }
}

inline bool is_pointer_to_field(const char* format) { return std::strstr(format, "*%p") != nullptr; }

// `name` is empty for lambda captures (closure fields are unnamed): then the position is used.
[[noreturn]] void throw_bad_capture(const char* type, const char* name, int position, const char* why);

// Save: walks a live closure and writes every capture.
class capture_writer {
 public:
  capture_writer(output_archive& ar, const void* closure, std::size_t size)
      : ar_(ar), begin_(static_cast<const std::byte*>(closure)), end_(begin_ + size) {}

  template <class... A>
  void operator()(const char* format, A&&... args) {
    if constexpr (sizeof...(A) == 4) field(format, std::forward<A>(args)...);
  }

 private:
  template <class I, class T, class N, class V>
  void field(const char* format, I&&, T&& type, N&& name, V&& value) {
    using Value = std::remove_cvref_t<V>;
    ++position_;
    if constexpr (std::is_pointer_v<Value>) {
      using Pointee = std::remove_cv_t<std::remove_pointer_t<Value>>;
      if (!is_pointer_to_field(format)) throw_bad_capture(type, name, position_, "is a raw pointer (or `this`)");
      auto* at = reinterpret_cast<const std::byte*>(value);
      if (at < begin_ || at >= end_) throw_bad_capture(type, name, position_, "is captured by reference");
      if constexpr (std::is_void_v<Pointee> || std::is_function_v<Pointee> || !is_serializable_v<Pointee>) {
        (void)sizeof(capture_not_serializable<Pointee>);
      } else {
        ar_(*value);
      }
    } else {
      if constexpr (!is_serializable_v<Value>) (void)sizeof(capture_not_serializable<Value>);
      else ar_(value);
    }
  }

  output_archive& ar_;
  const std::byte* begin_;
  const std::byte* end_;
  int position_ = 0;
};

// Load: walks zeroed storage laid out as the closure and constructs every capture from the
// archive. If decoding fails half-way, the captures built so far are destroyed again.
class capture_reader {
 public:
  capture_reader(input_archive& ar, void* closure, std::size_t size)
      : ar_(ar), begin_(static_cast<std::byte*>(closure)), end_(begin_ + size) {}
  ~capture_reader() {
    for (auto it = built_.rbegin(); it != built_.rend(); ++it) it->destroy(it->object);
  }
  capture_reader(const capture_reader&) = delete;
  capture_reader& operator=(const capture_reader&) = delete;

  // The closure is complete: its own destructor owns the captures from now on.
  void commit() { built_.clear(); }

  template <class... A>
  void operator()(const char* format, A&&... args) {
    if constexpr (sizeof...(A) == 4) field(format, std::forward<A>(args)...);
  }

 private:
  struct built {
    void (*destroy)(void*);
    void* object;
  };

  template <class I, class T, class N, class V>
  void field(const char* format, I&&, T&&, N&&, V&& value) {
    using Value = std::remove_cvref_t<V>;
    if constexpr (std::is_pointer_v<Value>) {
      using Pointee = std::remove_cv_t<std::remove_pointer_t<Value>>;
      auto* at = reinterpret_cast<std::byte*>(const_cast<Pointee*>(value));
      if (!is_pointer_to_field(format) || at < begin_ || at >= end_)
        throw decode_error("closure layout differs from the sender's (pointer capture in payload)");
      if constexpr (std::is_void_v<Pointee> || std::is_function_v<Pointee> || !is_serializable_v<Pointee>) {
        (void)sizeof(capture_not_serializable<Pointee>);
      } else {
        auto* object = reinterpret_cast<Pointee*>(at);
        construct(object);
        ar_(*object);
      }
    } else if constexpr (is_serializable_v<Value>) {
      ar_(const_cast<Value&>(value));
    }
  }

  template <class U>
  void construct(U* object) {
    if constexpr (std::is_array_v<U>) {
      for (auto& element : *object) construct(&element);
    } else if constexpr (std::is_class_v<U>) {
      if constexpr (!std::is_default_constructible_v<U>) (void)sizeof(capture_not_default_constructible<U>);
      else {
        std::construct_at(object);
        if constexpr (!std::is_trivially_destructible_v<U>)
          built_.push_back({[](void* p) { std::destroy_at(static_cast<U*>(p)); }, object});
      }
    }
  }

  input_archive& ar_;
  std::byte* begin_;
  std::byte* end_;
  std::vector<built> built_;
};

// Fingerprint walk: only the field formats and type names are read, never the values.
class layout_hasher {
 public:
  template <class... A>
  void operator()(const char* format, A&&... args) {
    text_ += format;
    if constexpr (sizeof...(A) >= 2) add_type(args...);
  }
  const std::string& text() const { return text_; }

 private:
  template <class I, class T, class... R>
  void add_type(I&&, T&& type, R&&...) {
    if constexpr (std::is_convertible_v<T, const char*>) {
      text_ += '|';
      text_ += type;
    }
  }
  std::string text_;
};

template <class F>
void save_closure(output_archive& ar, const F& closure) {
  constexpr auto strategy = strategy_for<F>();
  if constexpr (strategy == closure_strategy::user_serialize) {
    ar(closure);
  } else if constexpr (strategy == closure_strategy::reflect) {
#if defined(__clang__) && __clang_major__ >= 15
    capture_writer writer(ar, &closure, sizeof(F));
    __builtin_dump_struct(&closure, writer);
#endif
  } else {
    ar.write_bytes(&closure, sizeof(F));
  }
}

// Rebuilds a closure in `storage` (sizeof(F) bytes, aligned for F); the caller destroys it.
template <class F>
F* load_closure(input_archive& ar, void* storage) {
  constexpr auto strategy = strategy_for<F>();
  if constexpr (strategy == closure_strategy::user_serialize) {
    F* closure = std::construct_at(static_cast<F*>(storage));
    try {
      ar(*closure);
    } catch (...) {
      std::destroy_at(closure);
      throw;
    }
    return closure;
  } else if constexpr (strategy == closure_strategy::reflect) {
#if defined(__clang__) && __clang_major__ >= 15
    std::memset(storage, 0, sizeof(F));
    F* closure = static_cast<F*>(storage);
    capture_reader reader(ar, storage, sizeof(F));
    __builtin_dump_struct(closure, reader);
    reader.commit();
    return closure;
#else
    return nullptr;
#endif
  } else {
    ar.read_bytes(storage, sizeof(F));
    return static_cast<F*>(storage);
  }
}

// Text describing the closure's layout (field types in order); hashed into the fingerprint.
template <class F>
std::string closure_layout() {
  // A reflected closure travels field by field, so its size (which differs between standard
  // libraries: std::string is 32 bytes in libstdc++, 24 in libc++) is not part of its layout.
  std::string text;
  if constexpr (strategy_for<F>() == closure_strategy::reflect) {
#if defined(__clang__) && __clang_major__ >= 15
    alignas(F) std::byte storage[sizeof(F)] = {};
    layout_hasher hasher;
    __builtin_dump_struct(reinterpret_cast<F*>(storage), hasher);
    text += hasher.text();
#endif
  } else {
    text = std::to_string(sizeof(F)) + "/" + std::to_string(alignof(F)) + ":" + portable_type_name(typeid(F).name());
  }
  return text;
}

}  // namespace cppless::detail
