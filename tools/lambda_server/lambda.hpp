// The Lambda model of the local server: functions, their execution environments (processes
// running the function's bootstrap against a per-environment Runtime API endpoint), and the
// invocations queued for them. Speaks the Invoke API and the control-plane calls `cppless
// deploy` uses (create/get/update/delete/list functions) on the client port, and the Runtime API
// on each environment's port.
#pragma once

#include "http.hpp"

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace lambda_server {

struct server_options {
  std::map<std::string, std::string> keys;  // access key id -> secret key (SigV4 check)
  bool check_signatures = true;
  std::string region = "us-east-1";
  std::string account = "123456789012";
  unsigned concurrency = 4;            // execution environments per function (unless configured)
  bool throttle = false;               // all environments busy: 429 instead of queueing
  std::string work_dir;                // where deployed zips are unpacked
  std::string any_function;            // serve every unknown function name with this executable
  unsigned default_timeout = 30;       // seconds, for functions created without one
  bool forward_output = false;         // copy functions' stdout/stderr to ours
  std::size_t max_payload = 6291456;   // Lambda's synchronous request and response limit
  std::size_t max_event_payload = 1048576;  // Lambda's limit for an Event (asynchronous) request
  std::map<std::string, std::string> extra_env;  // given to every environment
};

struct invocation;
struct environment;

struct function {
  std::string name, runtime = "provided.al2023", role, handler = "bootstrap", description;
  std::string task_root, executable;  // where the code lives and what runs
  unsigned memory = 128, timeout = 3, storage = 512, concurrency = 0;
  std::string arch = "x86_64";
  std::map<std::string, std::string> env;
  std::string code_sha256, last_modified, revision;
  std::size_t code_size = 0;
  unsigned generation = 0;  // bumped by code/config updates; older environments retire
  std::deque<std::shared_ptr<invocation>> queue;
  std::vector<std::shared_ptr<environment>> envs;
};

struct fault {
  int status = 0;        // answer invocations with this HTTP status...
  bool drop = false;     // ...or close their connection without an answer
  unsigned count = 0;    // for this many invocations
  std::string function;  // only this function (empty: any)
};

class lambda_service {
 public:
  lambda_service(event_loop& loop, server_options options);
  ~lambda_service();

  // Registers a function served by an executable in place (no zip).
  void add_function(function f);
  void handle(http_request&& req, reply_to reply);  // the client port

  struct counters {
    std::uint64_t invocations = 0, cold_starts = 0, errors = 0, timeouts = 0, throttled = 0, dropped = 0;
  };

 private:
  // Invoke API and fault injection
  void invoke(const std::string& name, http_request&& req, reply_to reply);
  void dispatch(function& fn);
  void spawn(function& fn);
  void assign(const std::shared_ptr<environment>& env, std::shared_ptr<invocation> inv);
  void finish(invocation& inv, int status, std::string body, const std::string& function_error);
  void fail_invocation(invocation& inv, const std::string& type, const std::string& message);
  void timed_out(const std::shared_ptr<invocation>& inv);
  void child_exited(int pid, int status);
  void runtime_request(const std::shared_ptr<environment>& env, http_request&& req, reply_to reply);
  void retire(environment& env);

  // Control plane (control.cpp)
  void control(http_request&& req, reply_to reply);
  std::string configuration_json(const function& fn) const;
  bool install_code(function& fn, const std::string& zip_base64, std::string& error);
  std::string arn(const std::string& name) const;

  function* find(const std::string& name);

  event_loop& loop_;
  server_options options_;
  std::map<std::string, std::unique_ptr<function>> functions_;
  std::vector<std::unique_ptr<function>> deleted_;
  std::map<int, std::shared_ptr<environment>> by_pid_;
  std::vector<fault> faults_;
  counters counters_;
  std::uint64_t next_env_ = 1;
};

}  // namespace lambda_server
