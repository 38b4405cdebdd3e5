// cppless/entry.hpp — the registry of offloadable functions ("alternative entry points").
//
// Every instantiation of dispatch/async with a callable type F, argument types Args and a
// Config registers one entry at static-initialisation time. The executable is host and worker
// at once: a worker finds the entry by its id hash and calls its invoker, which rebuilds the
// closure and the arguments from the payload, calls it, and writes the result.
// `cppless manifest <exe>` prints all entries as JSON (the paper's manifest).
#pragma once

#include <cppless/archive.hpp>
#include <cppless/byte_buffer.hpp>
#include <cppless/capture.hpp>
#include <cppless/config.hpp>
#include <cppless/identity.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace cppless {

// Version of the payload layout produced by invokers; part of every fingerprint.
inline constexpr std::uint32_t wire_version = 2;  // 2: shared_ptr identity, polymorphic pointers

struct entry {
  std::string id;             // unique, stable across builds of the same sources
  std::string name;           // readable: "(lambda at examples/pi/main.cpp:12:13)"
  std::uint64_t id_hash = 0;  // what the wire carries
  std::uint64_t fingerprint = 0;  // layout of captures, argument and result types
  config_values config;
  // Rebuilds callable and arguments from `payload`, calls it, appends the result to `result`.
  void (*invoke)(std::span<const std::byte> payload, byte_buffer& result) = nullptr;
};

class registry {
 public:
  static registry& global();

  // Adds an entry; two different ids with the same hash abort the program at start-up.
  const entry& add(entry e);
  const entry* find(std::uint64_t id_hash) const;
  std::vector<const entry*> entries() const;  // sorted by id
  std::string manifest_json() const;          // {"entry_points": [...]}

 private:
  registry() = default;
  std::vector<std::unique_ptr<entry>> entries_;
};

namespace detail {

std::string describe_signature(std::initializer_list<const char*> mangled_types);

template <class Config, class F, class... Args>
struct function_entry {
  using result_type = std::decay_t<std::invoke_result_t<F&, std::decay_t<Args>&&...>>;

  // Checked when the entry is first named (before its members are instantiated), so that this
  // is the first error a user sees, not a cascade from the decoding code below.
  static_assert((is_serializable_v<std::decay_t<Args>> && ...),
                "cppless: an argument type is not serializable: give it a serialize(Archive&) member "
                "(cereal convention), or save/load, or pass a supported type (see archive.hpp)");
  static_assert((std::is_default_constructible_v<std::decay_t<Args>> && ...),
                "cppless: an argument type is not default-constructible: the worker builds each argument "
                "before decoding into it; add a default constructor (it may be private, with the archive "
                "as friend) or wrap the value");
  static_assert(std::is_void_v<result_type> || is_serializable_v<result_type>,
                "cppless: the function's result type is not serializable: give it a serialize(Archive&) "
                "member (cereal convention), or return a supported type (see archive.hpp)");

  static const entry& get() {
    static const entry& registered = registry::global().add(make());
    return registered;
  }

  // Referencing this member from dispatch instantiates it, which registers the entry before
  // main runs, in the host and in every worker (they are the same executable).
  static inline const entry* const registration = &get();

  static entry make() {
    entry e;
    // Type names in their portable spelling: the same under libstdc++ and libc++ (identity.hpp).
    std::string signature = "(";
    ((signature += portable_type_name(typeid(std::decay_t<Args>).name()) + ","), ...);
    if (signature.size() > 1) signature.pop_back();
    signature += ")";
    e.name = type_name<F>();
    e.config = Config::values();
    e.id = e.name + "#" + portable_type_name(typeid(F).name()) + signature + "[" + e.config.describe() + "]";
    e.id_hash = hash64(e.id);
    e.fingerprint = hash64(closure_layout<F>() + signature + "->" + portable_type_name(typeid(result_type).name()) +
                           "/v" + std::to_string(wire_version));
    e.invoke = &invoke;
    return e;
  }

  static void invoke(std::span<const std::byte> payload, byte_buffer& result) {
    input_archive in(payload.data(), payload.size());
    alignas(F) std::byte storage[sizeof(F)];
    F* fn = load_closure<F>(in, storage);
    struct destroy_closure {
      F* f;
      ~destroy_closure() { std::destroy_at(f); }
    } guard{fn};
    std::tuple<std::decay_t<Args>...> args;
    std::apply([&](auto&... a) { (in(a), ...); }, args);
    in.expect_end();
    output_archive out(result);
    if constexpr (std::is_void_v<result_type>) {
      std::apply(*fn, std::move(args));
    } else {
      const result_type value = std::apply(*fn, std::move(args));
      out(value);
    }
  }
};

}  // namespace detail
}  // namespace cppless
