// Defects found when the local backend was tried from outside (issue 10): each test here failed
// before its fix. Worker-side misbehaviour is staged from inside a function, as a user's code
// could do it: scribbling on the shared memory, returning too much, waiting on nested calls.
#include "local/shm_channel.hpp"

#include <cppless/cppless.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace {

using namespace std::chrono_literals;

std::string temp_path(const std::string& what) {
  return "/tmp/cppless-" + what + "-" + std::to_string(::getpid());
}

int count_lines(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// The shared region of the worker this code runs in (the one mapping of the memfd).
cppless::local::region_header* own_region() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("memfd:cppless-worker") == std::string::npos) continue;
    return reinterpret_cast<cppless::local::region_header*>(std::stoull(line.substr(0, line.find('-')), nullptr, 16));
  }
  return nullptr;
}

// Defect 1: a worker waiting for a nested call serves the calls it holds at once. Such a call
// must count as started: its timeout runs, and if its worker dies it is not sent elsewhere
// again (it may have run). Here T is handed to the one worker while that worker runs N inside
// A's wait; T sleeps past its 1 s timeout and then crashes. Before the fix T's timeout never
// started and, after the crash, T ran a second time on the replacement worker.
TEST(LocalHardening, ACallServedDuringANestedWaitHasItsTimeoutAndRunsOnce) {
  cppless::local_options options;
  options.workers = 1;
  options.prefetch = 2;
  cppless::local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();
  const std::string nested_started = temp_path("nested-started"), runs = temp_path("t-runs");
  std::remove(nested_started.c_str());
  std::remove(runs.c_str());

  auto a = cppless::async(instance, [nested_started] {
    cppless::local_dispatcher inner;
    auto nested = inner.create_instance();
    auto n = cppless::async(nested, [nested_started] {
      std::ofstream(nested_started) << "x";
      std::this_thread::sleep_for(1500ms);
      return 1;
    });
    return n.get();
  });
  // Drive the host until N runs (inside A's wait, on the same worker).
  instance.drive_until([&] { return exists(nested_started) || a.ready(); });
  ASSERT_FALSE(a.ready());

  using one_second = cppless::config<cppless::with_timeout<1>>;
  auto t = cppless::async<one_second>(instance, [runs] {
    std::ofstream(runs, std::ios::app) << ::getpid() << "\n";
    std::this_thread::sleep_for(3s);
    std::raise(SIGSEGV);
    return 0;
  });
  EXPECT_THROW(t.get(), cppless::timeout_error);
  try {
    a.get();
  } catch (const cppless::worker_crashed& e) {
    EXPECT_NE(std::string(e.what()).find("exceeded its timeout"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cppless::async(instance, [] { return 5; }).get(), 5);
  EXPECT_EQ(count_lines(runs), 1) << "the call ran more than once";
  std::remove(nested_started.c_str());
  std::remove(runs.c_str());
}

// Defect 8: a result that comes after the call's timeout (the host was not looking) is a
// timeout, not a success; the worker that produced it is healthy and stays.
TEST(LocalHardening, AResultPastItsTimeoutIsATimeout) {
  cppless::local_options options;
  options.workers = 1;
  cppless::local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();
  using one_second = cppless::config<cppless::with_timeout<1>>;
  int r = 0;
  cppless::dispatch<one_second>(instance, [] {
    std::this_thread::sleep_for(1300ms);
    return 1;
  }, r);
  // The host does not run while this thread sleeps: the result is in the ring before the host
  // looks at the deadline again. (Not a synchronisation: the outcome is the same either way.)
  std::this_thread::sleep_for(2s);
  try {
    instance.wait_one();
    FAIL() << "a call that ran past its timeout succeeded";
  } catch (const cppless::timeout_error& e) {
    EXPECT_NE(std::string(e.what()).find("past its timeout"), std::string::npos) << e.what();
  }
  EXPECT_EQ(r, 0);
  EXPECT_EQ(cppless::async(instance, [] { return 2; }).get(), 2);
}

// Defect 2: ring positions a worker can write are checked before the host uses them. A worker
// that moves them out of range is treated as crashed; the host lives on.
void expect_corruption_reported(cppless::future<std::size_t>& f, const char* what) {
  try {
    f.get();
    ADD_FAILURE() << what << ": the call succeeded on a corrupted ring";
  } catch (const cppless::worker_crashed& e) {
    EXPECT_NE(std::string(e.what()).find("corrupted the shared memory"), std::string::npos) << e.what();
  }
}

TEST(LocalHardening, RingPositionsFromTheWorkerAreChecked) {
  std::vector<char> big(std::size_t{3} << 20, 'x');  // larger than a ring
  for (int variant = 0; variant < 2; ++variant) {
    cppless::local_options options;
    options.workers = 1;
    cppless::local_dispatcher dispatcher(options);
    auto instance = dispatcher.create_instance();
    // The host's read position in the host->worker ring, moved by the worker: ahead of what the
    // host wrote, or far behind it. It stays so until the worker reads again.
    EXPECT_TRUE(cppless::async(instance, [variant] {
      auto* h = own_region();
      if (!h) return false;
      if (variant == 0) h->to_worker.read_pos.fetch_add(std::uint64_t{4} << 20);
      else h->to_worker.read_pos.fetch_sub(std::uint64_t{1} << 40);
      return true;
    }).get()) << "no shared region found in the worker";
    // A payload larger than the ring makes the host look at the worker's read position.
    auto f = cppless::async(instance, [big] { return big.size(); });
    expect_corruption_reported(f, variant == 0 ? "read position ahead" : "read position behind");
    EXPECT_EQ(cppless::async(instance, [big] { return big.size(); }).get(), big.size());
    EXPECT_EQ(dispatcher.workers_started(), 2u);
  }
  // The worker's write position, 3 GiB past what fits: the host must not read beyond the ring.
  cppless::local_options options;
  options.workers = 1;
  cppless::local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();
  auto f = cppless::async(instance, []() -> std::size_t {
    auto* h = own_region();
    if (!h) return 0;
    h->to_host.write_pos.fetch_add(std::uint64_t{3} << 30);
    std::this_thread::sleep_for(30s);  // the host must end this, not wait for it
    return 1;
  });
  expect_corruption_reported(f, "write position");
  EXPECT_EQ(cppless::async(instance, [] { return 4; }).get(), 4);
}

// Defect 5: two threads on one instance. The second is refused with a clear error instead of
// taking the first one's results; after the first has waited, handing the instance over is fine.
TEST(LocalHardening, AnInstanceRefusesASecondThreadWhileItHasPendingCalls) {
  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();
  int r = 0;
  cppless::dispatch(instance, [] { return 1; }, r);
  std::string dispatch_error, wait_error;
  std::thread([&] {
    int other = 0;
    try {
      cppless::dispatch(instance, [] { return 2; }, other);
    } catch (const cppless::usage_error& e) {
      dispatch_error = e.what();
    }
    try {
      instance.wait_one();
    } catch (const cppless::usage_error& e) {
      wait_error = e.what();
    }
  }).join();
  EXPECT_NE(dispatch_error.find("one instance per thread"), std::string::npos) << dispatch_error;
  EXPECT_NE(wait_error.find("wait_one"), std::string::npos) << wait_error;
  cppless::wait(instance, 1);
  EXPECT_EQ(r, 1);
  EXPECT_EQ(instance.pending(), 0u);
  std::thread([&] {
    int other = 0;
    cppless::dispatch(instance, [] { return 2; }, other);
    cppless::wait(instance, 1);
    EXPECT_EQ(other, 2);
  }).join();
}

// Defect 6: a result over the limit is payload_too_large at once, in the worker, which stays;
// so is a nested call over it. A limit past the frame's hard cap is refused.
TEST(LocalHardening, OversizedResultsAndNestedCallsAreRefusedAtOnce) {
  cppless::local_options options;
  options.workers = 1;
  options.max_payload = std::size_t{1} << 20;
  cppless::local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();
  auto big = cppless::async(instance, [] { return std::vector<char>(std::size_t{2} << 20, 'r'); });
  try {
    big.get();
    FAIL() << "an oversized result was accepted";
  } catch (const cppless::payload_too_large& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the limit of 1048576"), std::string::npos) << e.what();
  }
  auto nested = cppless::async(instance, [] {
    cppless::local_dispatcher inner;
    auto i = inner.create_instance();
    std::vector<char> payload(std::size_t{2} << 20, 'n');
    return cppless::async(i, [payload] { return payload.size(); }).get();
  });
  try {
    nested.get();
    FAIL() << "an oversized nested call was sent";
  } catch (const cppless::remote_error& e) {
    EXPECT_NE(e.remote_type().find("payload_too_large"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cppless::async(instance, [] { return 3; }).get(), 3);
  EXPECT_EQ(dispatcher.workers_started(), 1u) << "the worker was not replaced: nothing crashed";

  cppless::local_options too_big;
  too_big.max_payload = std::size_t{2} << 30;
  EXPECT_THROW(cppless::local_dispatcher{too_big}, cppless::error);
}

// Defect 6: the payload bytes queued on the host are bounded. With `fail`, the dispatch past
// the bound throws queue_full and nothing is lost; with `block` (the default), dispatch waits.
TEST(LocalHardening, QueuedPayloadBytesAreBounded) {
  const std::string release = temp_path("release-blocker");
  std::remove(release.c_str());
  cppless::local_options options;
  options.workers = 1;
  options.prefetch = 0;
  options.max_queued_bytes = std::size_t{4} << 20;
  options.when_full = cppless::local_options::queue_full_policy::fail;
  cppless::local_dispatcher dispatcher(options);
  auto instance = dispatcher.create_instance();
  bool released = false;
  cppless::dispatch(instance, [release] {
    for (int i = 0; i < 10'000 && ::access(release.c_str(), F_OK) != 0; ++i) std::this_thread::sleep_for(1ms);
    return true;
  }, released);
  std::vector<char> megabyte(std::size_t{1} << 20, 'm');
  std::vector<std::size_t> sizes(8, 0);
  std::size_t accepted = 0;
  try {
    for (; accepted < sizes.size(); ++accepted)
      cppless::dispatch(instance, [megabyte] { return megabyte.size(); }, sizes[accepted]);
  } catch (const cppless::queue_full& e) {
    EXPECT_NE(std::string(e.what()).find("max_queued_bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(accepted, 3u) << "three 1 MiB calls fit under 4 MiB, a fourth does not";
  std::ofstream(release) << "go";
  cppless::wait(instance, accepted + 1);
  EXPECT_TRUE(released);
  for (std::size_t i = 0; i < accepted; ++i) EXPECT_EQ(sizes[i], megabyte.size());

  cppless::local_options blocking = options;
  blocking.when_full = cppless::local_options::queue_full_policy::block;
  cppless::local_dispatcher patient(blocking);
  auto waits = patient.create_instance();
  std::vector<std::size_t> all(12, 0);
  for (auto& s : all) cppless::dispatch(waits, [megabyte] { return megabyte.size(); }, s);
  cppless::wait(waits, all.size());
  for (auto s : all) EXPECT_EQ(s, megabyte.size());
  std::remove(release.c_str());
}

}  // namespace
