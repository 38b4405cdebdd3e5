// Serialization benchmark: the cppless archive against cereal and against memcpy.
//
// Prints one JSON object per line (stdout) and a readable summary with ratios (stderr):
//   cases  u32x1M      std::vector<std::uint32_t>, 1,000,000 random values
//          struct100k  std::vector<S>, 100,000 x {int a, b; std::string s (42 chars)}, S has a
//                      cereal-style serialize member used by every implementation
//   impls  cppless         to_bytes / from_bytes (a fresh buffer and a fresh vector every time)
//          cppless_reuse   the same into a buffer / vector kept from the previous repetition
//          cereal_binary   cereal::BinaryOutputArchive into a std::ostringstream, then .str();
//                          decode from a std::istringstream over the string (what cereal users
//                          write, so stream construction and the string copy are included)
//          cereal_json     cereal::JSONOutputArchive / JSONInputArchive, same stream handling
//          cppless_base64  encode: archive then base64 into a std::string; decode: base64 into a
//                          byte_buffer then archive (the AWS Lambda JSON path)
//          memcpy          a memcpy of the cppless payload into a preallocated buffer: the limit
//   "bytes" is the size of that implementation's payload; gib_per_s = bytes / median time.
//   Every measurement is repeated (41 times by default, 21 for cereal_json, after 3 warm-ups),
//   round-robin across implementations, each timed run right after an untimed one (warm cache);
//   medians and p10/p90 are printed. The heap is kept warm between repetitions (mallopt), as a
//   long-running worker's is.
//
//   bench_serialization [--reps N]
#include <cppless/archive.hpp>
#include <cppless/base64.hpp>

#include <cereal/archives/binary.hpp>
#include <cereal/archives/json.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct S {
  int a = 0, b = 0;
  std::string s;
  template <class A>
  void serialize(A& ar) {
    ar(a, b, s);
  }
  bool operator==(const S&) const = default;
};

template <class T>
inline void keep(T const& value) {
  asm volatile("" : : "r"(&value) : "memory");
}

struct stats {
  double median_ns, p10_ns, p90_ns;
};

struct item {
  std::string case_name, impl, op;
  std::size_t bytes;
  int reps;
  std::function<void()> fn;
  std::vector<double> ns;
};

struct row {
  std::string case_name, impl, op;
  std::size_t bytes;
  stats s;
};
std::vector<item> pending;
std::vector<row> rows;

void add(const std::string& case_name, const std::string& impl, const std::string& op, std::size_t bytes, int reps,
         std::function<void()> fn) {
  pending.push_back({case_name, impl, op, bytes, reps, std::move(fn), {}});
}

stats summarize(std::vector<double> ns) {
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) { return ns[static_cast<std::size_t>(q * static_cast<double>(ns.size() - 1) + 0.5)]; };
  return {at(0.5), at(0.1), at(0.9)};
}

double time_once(const item& it) {
  const auto t0 = std::chrono::steady_clock::now();
  it.fn();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count();
}

// Runs the pending measurements round-robin (one repetition of each per round), so that every
// implementation sees the same machine: on a shared 2-core box a burst of load then slows all
// of them alike instead of whichever happened to run at that moment. Within a round, each
// measured run (below 50 ms) follows an untimed one, so it finds its data in cache and the
// allocator in the state its own previous run left, as in a loop doing the same thing.
void run_pending() {
  for (item& it : pending)
    for (int i = 0; i < 3; ++i) it.fn();  // warm-up: page faults, allocator state
  int rounds = 0;
  for (const item& it : pending) rounds = std::max(rounds, it.reps);
  for (int r = 0; r < rounds; ++r) {
    for (item& it : pending) {
      if (r >= it.reps) continue;
      if (it.ns.empty() || it.ns.back() < 50e6) it.fn();
      it.ns.push_back(time_once(it));
    }
  }
  for (item& it : pending) {
    const stats st = summarize(std::move(it.ns));
    const double gib_s = static_cast<double>(it.bytes) / st.median_ns * 1e9 / (1024.0 * 1024.0 * 1024.0);
    std::printf(
        "{\"suite\":\"serialization\",\"case\":\"%s\",\"impl\":\"%s\",\"op\":\"%s\",\"bytes\":%zu,"
        "\"median_ns\":%.0f,\"p10_ns\":%.0f,\"p90_ns\":%.0f,\"gib_per_s\":%.3f}\n",
        it.case_name.c_str(), it.impl.c_str(), it.op.c_str(), it.bytes, st.median_ns, st.p10_ns, st.p90_ns, gib_s);
    std::fflush(stdout);
    rows.push_back({it.case_name, it.impl, it.op, it.bytes, st});
  }
  pending.clear();
}

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "bench_serialization: round trip failed: %s\n", what);
    std::exit(1);
  }
}

template <class T>
void run_case(const std::string& name, const T& value, int reps) {
  const int slow_reps = 21;  // cereal JSON is two orders of magnitude slower

  const cppless::byte_buffer payload = cppless::to_bytes(value);
  check(cppless::from_bytes<T>(payload.span()) == value, "cppless");

  std::string cereal_bin;
  {
    std::ostringstream os;
    cereal::BinaryOutputArchive ar(os);
    ar(value);
    cereal_bin = os.str();
  }

  std::string json;
  {
    std::ostringstream os;
    {
      cereal::JSONOutputArchive ar(os, cereal::JSONOutputArchive::Options::NoIndent());
      ar(value);
    }
    json = os.str();
    std::istringstream is(json);
    cereal::JSONInputArchive ar(is);
    T v;
    ar(v);
    check(v == value, "cereal_json");
  }

  const std::string text = cppless::base64_encode(payload.span());
  check(cppless::from_bytes<T>(cppless::base64_decode(text).span()) == value, "cppless_base64");

  cppless::byte_buffer reused;
  T decoded;
  cppless::byte_buffer dst(payload.size());
  dst.resize_uninitialized(payload.size());

  add(name, "cppless", "encode", payload.size(), reps, [&] {
    cppless::byte_buffer b = cppless::to_bytes(value);
    keep(b.data());
  });
  add(name, "cppless", "decode", payload.size(), reps, [&] {
    T v = cppless::from_bytes<T>(payload.span());
    keep(v);
  });
  add(name, "cppless_reuse", "encode", payload.size(), reps, [&] {
    reused.clear();
    cppless::output_archive ar(reused);
    ar(value);
    keep(reused.data());
  });
  add(name, "cppless_reuse", "decode", payload.size(), reps, [&] {
    cppless::from_bytes(payload.span(), decoded);
    keep(decoded);
  });

  // cereal binary, through std::stringstream as its users do.
  add(name, "cereal_binary", "encode", cereal_bin.size(), reps, [&] {
    std::ostringstream os;
    {
      cereal::BinaryOutputArchive ar(os);
      ar(value);
    }
    std::string out = os.str();
    keep(out.data());
  });
  add(name, "cereal_binary", "decode", cereal_bin.size(), reps, [&] {
    std::istringstream is(cereal_bin);
    cereal::BinaryInputArchive ar(is);
    T v;
    ar(v);
    keep(v);
  });

  add(name, "cereal_json", "encode", json.size(), slow_reps, [&] {
    std::ostringstream os;
    {
      cereal::JSONOutputArchive ar(os, cereal::JSONOutputArchive::Options::NoIndent());
      ar(value);
    }
    std::string out = os.str();
    keep(out.data());
  });
  add(name, "cereal_json", "decode", json.size(), slow_reps, [&] {
    std::istringstream is(json);
    cereal::JSONInputArchive ar(is);
    T v;
    ar(v);
    keep(v);
  });

  // cppless + base64 (the AWS Lambda JSON path)
  add(name, "cppless_base64", "encode", text.size(), reps, [&] {
    cppless::byte_buffer b = cppless::to_bytes(value);
    std::string t = cppless::base64_encode(b.span());
    keep(t.data());
  });
  add(name, "cppless_base64", "decode", text.size(), reps, [&] {
    cppless::byte_buffer b = cppless::base64_decode(text);
    T v = cppless::from_bytes<T>(b.span());
    keep(v);
  });

  // base64 alone, on the cppless payload
  add(name, "base64_only", "encode", text.size(), reps, [&] {
    std::string t = cppless::base64_encode(payload.span());
    keep(t.data());
  });
  add(name, "base64_only", "decode", text.size(), reps, [&] {
    cppless::byte_buffer b = cppless::base64_decode(text);
    keep(b.data());
  });

  // memcpy of the cppless payload into a preallocated buffer: the limit for both directions.
  for (const char* op : {"encode", "decode"})
    add(name, "memcpy", op, payload.size(), reps, [&] {
      std::memcpy(dst.data(), payload.data(), payload.size());
      keep(dst.data());
    });

  run_pending();  // before the data above goes out of scope
}

const row* find(const std::string& c, const std::string& impl, const std::string& op) {
  for (const row& r : rows)
    if (r.case_name == c && r.impl == impl && r.op == op) return &r;
  return nullptr;
}

void summary() {
  std::fprintf(stderr, "\n%-11s %-15s %-6s %11s %10s %10s %11s %11s\n", "case", "impl", "op", "bytes", "median_us",
               "GiB/s", "x_cereal", "x_memcpy");
  std::fprintf(stderr, "%s\n", std::string(90, '-').c_str());
  for (const row& r : rows) {
    const row* cer = find(r.case_name, "cereal_binary", r.op);
    const row* mem = find(r.case_name, "memcpy", r.op);
    const double gib_s = static_cast<double>(r.bytes) / r.s.median_ns * 1e9 / (1024.0 * 1024.0 * 1024.0);
    // x_cereal: how many times faster than cereal binary; x_memcpy: fraction of memcpy's speed
    // (both by time, for the same data).
    std::fprintf(stderr, "%-11s %-15s %-6s %11zu %10.1f %10.3f %10.2fx %10.2f\n", r.case_name.c_str(), r.impl.c_str(),
                 r.op.c_str(), r.bytes, r.s.median_ns / 1e3, gib_s, cer->s.median_ns / r.s.median_ns,
                 mem->s.median_ns / r.s.median_ns);
  }
  std::fprintf(stderr,
               "\nx_cereal = cereal_binary time / this time (higher is faster); x_memcpy = memcpy time / this "
               "time (1.0 = memcpy speed).\n");
}

}  // namespace

int main(int argc, char** argv) {
  // Keep freed memory in the process between repetitions, as a long-running worker's heap is:
  // otherwise glibc returns the top of the heap after each decoded vector is freed, and every
  // repetition of every implementation pays for thousands of page faults instead of decoding.
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_MMAP_THRESHOLD, 512 << 20);
  int reps = 41;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--reps" && i + 1 < argc) reps = std::max(21, std::atoi(argv[++i]));

  std::mt19937 rng(42);
  std::vector<std::uint32_t> u32(1'000'000);
  for (auto& x : u32) x = static_cast<std::uint32_t>(rng());

  std::vector<S> structs(100'000);
  for (auto& s : structs) {
    s.a = static_cast<int>(rng());
    s.b = static_cast<int>(rng());
    s.s.resize(42);
    for (char& c : s.s) c = static_cast<char>('a' + rng() % 26);
  }

  run_case("u32x1M", u32, reps);
  run_case("struct100k", structs, reps);
  summary();
  return 0;
}
