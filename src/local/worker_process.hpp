// Starting worker processes (this executable in worker mode) and reading how they ended.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace cppless::local {

// File descriptor numbers the shared region and the host's doorbell get in a worker.
inline constexpr int worker_region_fd = 200;
inline constexpr int worker_doorbell_fd = 201;
inline constexpr const char* worker_env = "CPPLESS_WORKER";

// How a worker process ends on its own (the host reports other ends by signal).
namespace worker_exit {
inline constexpr int clean = 0;               // shut down by the host, or the host is gone
inline constexpr int bad_setup = 2;           // malformed CPPLESS_WORKER, unusable shared memory
inline constexpr int protocol_violation = 3;  // the host sent what only a worker may send, or corrupt ring positions
}  // namespace worker_exit

struct worker_process {
  pid_t pid = -1;
  int pidfd = -1;  // readable once the process has exited
};

// What a worker is told at start (through the CPPLESS_WORKER variable).
struct worker_settings {
  std::chrono::microseconds hot_poll{0};
  std::size_t max_payload = 0;  // results and nested calls above it fail with payload_too_large
};

// Starts /proc/self/exe as a worker attached to `region_fd`, ringing `doorbell_fd`.
worker_process spawn_worker(int region_fd, int doorbell_fd, const worker_settings& settings);

// Reaps an exited worker; returns "" for a clean exit, else a description of how it died
// ("signal 11 (Segmentation fault)", "exit code 3").
std::string reap_worker(const worker_process& p);

}  // namespace cppless::local
