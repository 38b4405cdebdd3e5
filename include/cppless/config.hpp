// cppless/config.hpp — per-function resource options, chosen at compile time.
//
//   using config = cppless::config<cppless::with_memory<512>, cppless::with_timeout<30>>;
//   cppless::dispatch<config>(instance, fn, result);
//
// The options become part of the function's identity: the same lambda dispatched with two
// configs is two functions (two Lambda functions on AWS, two manifest entries).
#pragma once

#include <cstdint>
#include <string>

namespace cppless {

enum class architecture : std::uint8_t { native, x86_64, arm64 };

template <unsigned MB>
struct with_memory {
  static constexpr unsigned memory_mb = MB;
};
template <unsigned Seconds>
struct with_timeout {
  static constexpr unsigned timeout_s = Seconds;
};
template <unsigned MB>
struct with_ephemeral_storage {
  static constexpr unsigned ephemeral_storage_mb = MB;
};
template <architecture A>
struct with_architecture {
  static constexpr architecture arch = A;
};

// Resolved values of one configuration, as the runtime and the manifest see them.
struct config_values {
  unsigned memory_mb = 1024;            // Lambda's memory size; informational for local workers
  unsigned timeout_s = 0;               // 0: no limit locally (a backend may impose its own)
  unsigned ephemeral_storage_mb = 512;  // Lambda's /tmp size
  architecture arch = architecture::native;

  std::string describe() const;  // "memory=512,timeout=30,storage=512,arch=native"
};

namespace detail {
template <class Opt, class = void> struct opt_memory { static constexpr unsigned v = 0; };
template <class Opt> struct opt_memory<Opt, std::void_t<decltype(Opt::memory_mb)>> { static constexpr unsigned v = Opt::memory_mb; };
template <class Opt, class = void> struct opt_timeout { static constexpr unsigned v = 0; };
template <class Opt> struct opt_timeout<Opt, std::void_t<decltype(Opt::timeout_s)>> { static constexpr unsigned v = Opt::timeout_s; };
template <class Opt, class = void> struct opt_storage { static constexpr unsigned v = 0; };
template <class Opt> struct opt_storage<Opt, std::void_t<decltype(Opt::ephemeral_storage_mb)>> { static constexpr unsigned v = Opt::ephemeral_storage_mb; };
template <class Opt, class = void> struct opt_arch { static constexpr architecture v = architecture::native; };
template <class Opt> struct opt_arch<Opt, std::void_t<decltype(Opt::arch)>> { static constexpr architecture v = Opt::arch; };

// The last option of a kind wins; an option left out keeps config_values' default.
template <unsigned Default, unsigned... Vs>
constexpr unsigned pick(unsigned result = Default) {
  ((result = Vs ? Vs : result), ...);
  return result;
}
}  // namespace detail

template <class... Options>
struct config {
  static constexpr unsigned memory_mb = detail::pick<1024, detail::opt_memory<Options>::v...>();
  static constexpr unsigned timeout_s = detail::pick<0, detail::opt_timeout<Options>::v...>();
  static constexpr unsigned ephemeral_storage_mb = detail::pick<512, detail::opt_storage<Options>::v...>();
  static constexpr architecture arch = [] {
    architecture a = architecture::native;
    ((a = detail::opt_arch<Options>::v != architecture::native ? detail::opt_arch<Options>::v : a), ...);
    return a;
  }();

  static config_values values() { return {memory_mb, timeout_s, ephemeral_storage_mb, arch}; }
};

using default_config = config<>;

}  // namespace cppless
