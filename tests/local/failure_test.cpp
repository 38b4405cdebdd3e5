// Failures end the call they belong to, with a typed error, and nothing else.
#include <cppless/cppless.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include <unistd.h>

namespace {

cppless::local_dispatcher& dispatcher() {
  static cppless::local_dispatcher d;
  return d;
}

TEST(LocalFailures, RemoteExceptionCarriesTypeAndMessage) {
  auto instance = dispatcher().create_instance();
  int r = 0;
  auto id = cppless::dispatch(instance, [](int k) -> int { throw std::out_of_range("index " + std::to_string(k)); }, r, 7);
  try {
    instance.wait_one();
    FAIL() << "no exception";
  } catch (const cppless::remote_error& e) {
    EXPECT_EQ(e.call_id(), id);
    EXPECT_EQ(e.remote_type(), "std::out_of_range");
    EXPECT_NE(std::string(e.what()).find("index 7"), std::string::npos) << e.what();
  }
  // The instance stays usable.
  auto f = cppless::async(instance, [] { return 1; });
  EXPECT_EQ(f.get(), 1);
  auto g = cppless::async(instance, []() -> int { throw std::runtime_error("from a future"); });
  EXPECT_THROW(g.get(), cppless::remote_error);
}

TEST(LocalFailures, WaitRethrowsAfterAllCallsEnded) {
  auto instance = dispatcher().create_instance();
  std::vector<int> r(5, 0);
  for (int i = 0; i < 5; ++i)
    cppless::dispatch(instance, [](int k) { if (k == 2) throw std::logic_error("two"); return k; }, r[i], i);
  EXPECT_THROW(cppless::wait(instance, 5), cppless::remote_error);
  EXPECT_EQ(instance.pending(), 0u);
  EXPECT_EQ(r[4], 4);
}

TEST(LocalFailures, CrashFailsThatCallOnlyAndTheWorkerIsReplaced) {
  auto instance = dispatcher().create_instance();
  int crashed = 0, fine = 0;
  auto crash_id = cppless::dispatch(instance, []() -> int { std::raise(SIGSEGV); return 0; }, crashed);
  cppless::dispatch(instance, [] { return 5; }, fine);
  int errors = 0;
  for (int i = 0; i < 2; ++i) {
    try {
      instance.wait_one();
    } catch (const cppless::worker_crashed& e) {
      ++errors;
      EXPECT_EQ(e.call_id(), crash_id);
      EXPECT_NE(std::string(e.what()).find("SIGSEGV"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(errors, 1);
  EXPECT_EQ(fine, 5);
  auto f = cppless::async(instance, [] { std::abort(); });
  try {
    f.get();
    FAIL();
  } catch (const cppless::worker_crashed& e) {
    EXPECT_NE(std::string(e.what()).find("SIGABRT"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cppless::async(instance, [] { return 9; }).get(), 9);
}

TEST(LocalFailures, TimeoutKillsTheCallAndTheWorkerIsReplaced) {
  auto instance = dispatcher().create_instance();
  using quick = cppless::config<cppless::with_timeout<1>>;
  auto started = std::chrono::steady_clock::now();
  auto f = cppless::async<quick>(instance, [] {
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return 1;
  });
  EXPECT_THROW(f.get(), cppless::timeout_error);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_EQ(cppless::async<quick>(instance, [] { return 2; }).get(), 2);
}

// One worker: every call after the first is handed to it ahead of time (prefetched).
cppless::local_dispatcher& single_worker() {
  static cppless::local_dispatcher d([] {
    cppless::local_options o;
    o.workers = 1;
    o.prefetch = 2;
    return o;
  }());
  return d;
}

TEST(LocalFailures, CallsHeldBehindACrashRunElsewhereExactlyOnce) {
  auto instance = single_worker().create_instance();
  int crashed = 0, second = 0, third = 0;
  auto crash_id = cppless::dispatch(instance, []() -> int {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the others are in its ring by now
    std::raise(SIGSEGV);
    return 0;
  }, crashed);
  // Each returns how many calls its worker process served before it: a fresh worker means the
  // call was not run (or half-run) by the one that crashed.
  static int served = 0;
  auto count = [](int k) { return k * 1000 + served++; };
  cppless::dispatch(instance, count, second, 2);
  cppless::dispatch(instance, count, third, 3);
  int errors = 0;
  for (int i = 0; i < 3; ++i) {
    try {
      instance.wait_one();
    } catch (const cppless::worker_crashed& e) {
      ++errors;
      EXPECT_EQ(e.call_id(), crash_id);
    }
  }
  EXPECT_EQ(errors, 1);
  EXPECT_EQ(second, 2000);  // first call of the replacement worker
  EXPECT_EQ(third, 3001);
  EXPECT_EQ(single_worker().workers_started(), 2u);
}

TEST(LocalFailures, APrefetchedCallsTimeoutStartsWhenItStarts) {
  auto instance = single_worker().create_instance();
  using two_seconds = cppless::config<cppless::with_timeout<2>>;
  // Three calls of ~0.8 s each on one worker with a 2 s timeout: each is within its own limit,
  // although the third ends ~2.4 s after it was handed over.
  std::vector<int> r(3, 0);
  for (int i = 0; i < 3; ++i)
    cppless::dispatch<two_seconds>(instance, [](int k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(800));
      return k;
    }, r[static_cast<std::size_t>(i)], i + 1);
  EXPECT_NO_THROW(cppless::wait(instance, 3));
  EXPECT_EQ(r, (std::vector<int>{1, 2, 3}));
  // A call held behind one that times out is not failed with it.
  int late = 0, after = 0;
  cppless::dispatch<two_seconds>(instance, [] {
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return 0;
  }, late);
  cppless::dispatch<two_seconds>(instance, [] { return 7; }, after);
  int timeouts = 0;
  for (int i = 0; i < 2; ++i) {
    try {
      instance.wait_one();
    } catch (const cppless::timeout_error&) {
      ++timeouts;
    }
  }
  EXPECT_EQ(timeouts, 1);
  EXPECT_EQ(after, 7);
  // ...and a prefetched call that overruns is stopped by its own timeout.
  int first = 0, stuck = 0;
  cppless::dispatch<two_seconds>(instance, [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return 1;
  }, first);
  auto stuck_id = cppless::dispatch<two_seconds>(instance, [] {
    std::this_thread::sleep_for(std::chrono::seconds(30));
    return 2;
  }, stuck);
  EXPECT_EQ(instance.wait_one().first + 1, stuck_id);
  try {
    instance.wait_one();
    FAIL() << "the overrunning call returned";
  } catch (const cppless::timeout_error& e) {
    EXPECT_EQ(e.call_id(), stuck_id);
  }
}

// With calls held behind the running one (prefetch 2), a worker may send a result without waking
// a sleeping host. The host must still learn of it soon, even when the next call then blocks on
// something the host does only after that result: here B waits (150 ms at most) for a file the
// host creates once A's future is ready. The host looks at the rings every millisecond while a
// worker holds calls; without that it would only look again when its 200 ms wait runs out.
TEST(LocalFailures, AResultIsNotWithheldBehindACallThatWaitsForTheHost) {
  cppless::local_options options;
  options.workers = 1;
  options.prefetch = 2;
  options.hot_poll = std::chrono::microseconds(0);  // the host sleeps at once
  cppless::local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();
  const std::string flag = "/tmp/cppless-withheld-" + std::to_string(::getpid());
  std::remove(flag.c_str());
  auto a = cppless::async(instance, [](int x) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the host is asleep by now
    return x;
  }, 1);
  bool saw_flag = false;
  int c = 0;
  cppless::dispatch(instance, [flag] {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
    while (std::chrono::steady_clock::now() < give_up) {
      if (std::FILE* f = std::fopen(flag.c_str(), "r")) {
        std::fclose(f);
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }, saw_flag);
  cppless::dispatch(instance, [](int x) { return x; }, c, 3);  // so two frames wait behind A
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(a.get(), 1);
  std::FILE* f = std::fopen(flag.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  cppless::wait(instance, 2);
  std::remove(flag.c_str());
  EXPECT_TRUE(saw_flag) << "A's result reached the host only after B gave up ("
                        << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s)";
  EXPECT_EQ(c, 3);
}

TEST(LocalFailures, UnknownFunctionAndForeignFingerprint) {
  auto instance = dispatcher().create_instance();
  // A real entry, so the call is valid except for what each case breaks.
  auto good = cppless::detail::make_invocation<cppless::default_config>([] { return 1; });
  cppless::invocation unknown;
  unknown.function_id = good.function_id ^ 0x5555;
  unknown.fingerprint = good.fingerprint;
  unknown.function_name = "stale";
  cppless::invocation foreign;
  foreign.function_id = good.function_id;
  foreign.fingerprint = good.fingerprint ^ 1;
  foreign.function_name = good.function_name;
  instance.submit(std::move(unknown), [](auto) {});
  instance.submit(std::move(foreign), [](auto) {});
  int unknown_errors = 0, fingerprint_errors = 0;
  for (int i = 0; i < 2; ++i) {
    try {
      instance.wait_one();
    } catch (const cppless::unknown_function& e) {
      std::string what = e.what();
      unknown_errors += what.find("no function") != std::string::npos;
      fingerprint_errors += what.find("fingerprint") != std::string::npos;
    }
  }
  EXPECT_EQ(unknown_errors, 1);
  EXPECT_EQ(fingerprint_errors, 1);
}

TEST(LocalFailures, CorruptPayloadIsAnErrorNotACrash) {
  auto instance = dispatcher().create_instance();
  std::string text(64, 'x');
  auto call = cppless::detail::make_invocation<cppless::default_config>([text](int k) { return text.size() + k; }, 1);
  for (int variant = 0; variant < 3; ++variant) {
    cppless::invocation broken;
    broken.function_id = call.function_id;
    broken.fingerprint = call.fingerprint;
    broken.function_name = call.function_name;
    if (variant == 0) broken.payload.append(call.payload.data(), call.payload.size() / 2);  // truncated
    if (variant == 1) {  // a length field claiming far more than there is
      broken.payload.append(call.payload.data(), call.payload.size());
      std::uint64_t huge = ~0ull >> 2;
      std::memcpy(broken.payload.data(), &huge, sizeof huge);
    }
    if (variant == 2) {  // trailing garbage
      broken.payload.append(call.payload.data(), call.payload.size());
      broken.payload.append("junk", 4);
    }
    instance.submit(std::move(broken), [](auto) {});
    EXPECT_THROW(instance.wait_one(), cppless::protocol_error) << "variant " << variant;
  }
  EXPECT_EQ(cppless::async(instance, [] { return 3; }).get(), 3);
}

TEST(LocalFailures, BadCapturesAndOversizedPayloadsFailBeforeSending) {
  cppless::local_options options;
  options.max_payload = 1024;
  cppless::local_dispatcher limited(options);
  auto instance = limited.create_instance();
  int local = 1, r = 0;
  EXPECT_THROW(cppless::dispatch(instance, [&local] { return local; }, r), cppless::capture_error);
  std::vector<char> big(4096, 'b');
  EXPECT_THROW(cppless::dispatch(instance, [big] { return big.size(); }, r), cppless::payload_too_large);
  EXPECT_EQ(instance.pending(), 0u);
  EXPECT_EQ(limited.workers_started(), 0u);
}

}  // namespace
