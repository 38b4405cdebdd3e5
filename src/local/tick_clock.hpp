// A steady clock for the local backend's hot path, read through the CPU's time-stamp counter.
//
// A no-op call reads the clock four times (dispatch and result on the host, start and end of the
// function on the worker). steady_clock::now() goes through the vDSO and costs ~26 ns on this
// project's reference machine (a VM with kvm-clock); the counter costs ~10 ns. Ticks become
// steady_clock time points through a rate measured against steady_clock on each thread: until
// a thread has watched the counter for a few milliseconds, now() simply is steady_clock::now();
// afterwards one steady_clock reading per ~second measures the rate again and rebases, so the
// two clocks agree to microseconds (timeouts are whole seconds), and now() never goes back.
// Without an invariant counter (or off x86) it is steady_clock throughout.
#pragma once

#include <cppless/instance.hpp>

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define CPPLESS_TICK_CLOCK_TSC 1
#endif

namespace cppless::local {

class tick_clock {
 public:
  static clock::time_point now() {
#ifdef CPPLESS_TICK_CLOCK_TSC
    static const bool invariant = invariant_tsc();
    if (!invariant) return clock::now();
    thread_local state s;
    const std::uint64_t tsc = __rdtsc();
    const std::uint64_t since = tsc - s.base_tsc;
    if (s.ns_per_tick > 0 && since < recheck_ticks) [[likely]]
      return s.monotonic(s.base_time + std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(since) * s.ns_per_tick)));
    return s.rebase();
#else
    return clock::now();
#endif
  }

 private:
#ifdef CPPLESS_TICK_CLOCK_TSC
  static constexpr std::uint64_t first_rate_ticks = std::uint64_t{1} << 24;  // ~6 ms at 3 GHz
  static constexpr std::uint64_t recheck_ticks = std::uint64_t{1} << 32;     // ~1.5 s at 3 GHz
  static constexpr std::uint64_t disturbed_ticks = std::uint64_t{1} << 14;   // ~5 us: not one read

  struct state {
    std::uint64_t base_tsc = 0;
    clock::time_point base_time{};  // a steady_clock reading taken at base_tsc
    double ns_per_tick = 0;         // 0: not measured yet
    clock::time_point last{};       // never go back (a rebase may correct a few microseconds)

    clock::time_point monotonic(clock::time_point t) {
      if (t < last) return last;
      last = t;
      return t;
    }
    // A steady_clock reading; once the counter has run long enough since the base, the rate over
    // that stretch, and a new base. A reading that took long (the thread was preempted inside
    // it) says little about when it was taken: it is returned but not used.
    clock::time_point rebase() {
      const std::uint64_t before = __rdtsc();
      const clock::time_point t = clock::now();
      const std::uint64_t after = __rdtsc();
      if (after - before > disturbed_ticks) return monotonic(t);
      const std::uint64_t tsc = before + (after - before) / 2;
      const std::uint64_t since = tsc - base_tsc;
      if (base_time == clock::time_point{} || since >= first_rate_ticks) {
        if (base_time != clock::time_point{})
          ns_per_tick = static_cast<double>((t - base_time).count()) / static_cast<double>(since);
        base_tsc = tsc;
        base_time = t;
      }
      return monotonic(t);
    }
  };

  static bool invariant_tsc() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u) return false;
    __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx);
    return (edx & (1u << 8)) != 0;  // "invariant TSC": constant rate, ticks in every C-state
  }
#endif
};

}  // namespace cppless::local
