#include "lambda.hpp"

#include "sigv4.hpp"

#include <cppless/base64.hpp>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

extern char** environ;

namespace lambda_server {

using nlohmann::json;

struct invocation {
  std::string id;
  std::string payload;
  reply_to reply;
  bool tail = false;
  function* fn = nullptr;
  std::weak_ptr<environment> env;
  steady::time_point received, started;
  event_loop::timer_id timer = 0;
  bool done = false;
};

struct environment {
  std::uint64_t id = 0;
  function* fn = nullptr;
  unsigned generation = 0;
  int pid = -1, port = 0;
  bool initialized = false, dead = false, killed = false;
  steady::time_point spawned;
  double init_ms = 0;
  bool reported_init = false;
  reply_to next;            // a /next waiting for work
  bool waiting = false;
  std::shared_ptr<invocation> current;
  std::string log;          // output since the current invocation started
  int output_fd = -1;       // the read end of its stdout/stderr pipe, until end of file
};

namespace {

std::string uuid() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const auto a = rng(), b = rng();
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-4%03llx-a%03llx-%012llx", static_cast<unsigned long long>(a >> 32),
                static_cast<unsigned long long>((a >> 16) & 0xffff), static_cast<unsigned long long>(a & 0xfff),
                static_cast<unsigned long long>(b >> 52), static_cast<unsigned long long>(b & 0xffffffffffffull));
  return buf;
}

long long epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string base64(std::string_view in) {
  std::string out;
  cppless::base64_encode_append(std::as_bytes(std::span(in.data(), in.size())), out);
  return out;
}

http_response aws_error(int status, const std::string& type, const std::string& message) {
  http_response r;
  r.status = status;
  r.headers = {{"Content-Type", "application/json"}, {"x-amzn-ErrorType", type}, {"x-amzn-RequestId", uuid()}};
  r.body = json{{"Type", status >= 500 ? "Service" : "User"}, {"message", message}}.dump();
  return r;
}

long max_rss_mb(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6) / 1024;
  return 0;
}

}  // namespace

lambda_service::lambda_service(event_loop& loop, server_options options) : loop_(loop), options_(std::move(options)) {
  loop_.on_child_exit([this](int pid, int status) { child_exited(pid, status); });
}

lambda_service::~lambda_service() {
  for (auto& [pid, env] : by_pid_) ::kill(pid, SIGKILL);
}

std::string lambda_service::arn(const std::string& name) const {
  return "arn:aws:lambda:" + options_.region + ":" + options_.account + ":function:" + name;
}

function* lambda_service::find(const std::string& name) {
  // Names may come as ARNs or with a qualifier; the local server has one version ($LATEST).
  std::string n = name;
  if (n.rfind("arn:", 0) == 0) n = n.substr(n.find(":function:") + 10);
  if (auto colon = n.find(':'); colon != std::string::npos) n.resize(colon);
  auto it = functions_.find(n);
  if (it != functions_.end()) return it->second.get();
  if (options_.any_function.empty()) return nullptr;
  function f;
  f.name = n;
  f.executable = options_.any_function;
  f.task_root = options_.any_function.substr(0, options_.any_function.rfind('/'));
  f.timeout = options_.default_timeout;
  f.memory = 1024;
  add_function(std::move(f));
  return functions_[n].get();
}

void lambda_service::add_function(function f) {
  if (!f.concurrency) f.concurrency = options_.concurrency;
  if (f.last_modified.empty()) f.last_modified = "2024-01-01T00:00:00.000+0000";
  if (f.revision.empty()) f.revision = uuid();
  auto name = f.name;
  functions_[name] = std::make_unique<function>(std::move(f));
}

void lambda_service::handle(http_request&& req, reply_to reply) {
  static constexpr std::string_view prefix = "/2015-03-31/functions/";
  // Test hooks, unsigned: fault injection and counters.
  if (req.path == "/_cppless/faults" && req.method == "POST") {
    auto doc = json::parse(req.body, nullptr, false);
    fault f;
    if (doc.is_object()) {
      f.status = doc.value("status", 0);
      f.drop = doc.value("drop", false);
      f.count = doc.value("count", 1u);
      f.function = doc.value("function", "");
    }
    if (f.status || f.drop) faults_.push_back(f);
    return reply.send({200, {{"Content-Type", "application/json"}}, "{}"});
  }
  if (req.path == "/_cppless/stats") {
    json envs = json::object();
    for (auto& [name, fn] : functions_) envs[name] = fn->envs.size();
    json doc = {{"invocations", counters_.invocations}, {"cold_starts", counters_.cold_starts},
                {"errors", counters_.errors},           {"timeouts", counters_.timeouts},
                {"throttled", counters_.throttled},     {"dropped", counters_.dropped},
                {"environments", envs}};
    return reply.send({200, {{"Content-Type", "application/json"}}, doc.dump()});
  }
  if (options_.check_signatures) {
    auto check = check_sigv4(req, options_.keys, "lambda");
    if (!check.ok) return reply.send(aws_error(check.status, check.error_type, check.message));
    // A request signed for another region is refused, as by Lambda's regional endpoint.
    const std::string& auth = *req.header("authorization");
    const std::size_t cred = auth.find("Credential=");
    const std::size_t d1 = auth.find('/', cred), d2 = auth.find('/', d1 + 1), d3 = auth.find('/', d2 + 1);
    if (d3 != std::string::npos && auth.compare(d2 + 1, d3 - d2 - 1, options_.region) != 0)
      return reply.send(aws_error(403, "InvalidSignatureException",
                                  "Credential should be scoped to a valid region, not '" +
                                      auth.substr(d2 + 1, std::min<std::size_t>(d3 - d2 - 1, 32)) + "'. "));
  }
  if (req.method == "POST" && req.path.rfind(prefix, 0) == 0 && req.path.size() > prefix.size() + 12 &&
      req.path.compare(req.path.size() - 12, 12, "/invocations") == 0) {
    std::string name = req.path.substr(prefix.size(), req.path.size() - prefix.size() - 12);
    // %3A in ARNs and qualified names
    for (std::size_t p; (p = name.find("%3A")) != std::string::npos;) name.replace(p, 3, ":");
    return invoke(name, std::move(req), reply);
  }
  control(std::move(req), reply);
}

void lambda_service::invoke(const std::string& qualified_name, http_request&& req, reply_to reply) {
  // A qualifier (?Qualifier=X or NAME:X): this server keeps no versions or aliases, so only
  // $LATEST exists; Lambda answers any other unknown qualifier with 404, and so does this.
  std::string name = qualified_name, qualifier;
  if (const auto colon = name.rfind(':'); colon != std::string::npos && name.rfind("arn:", 0) != 0) {
    qualifier = name.substr(colon + 1);
    name.resize(colon);
  }
  for (std::size_t start = 0; start < req.query.size();) {
    const std::size_t end = std::min(req.query.find('&', start), req.query.size());
    const std::string_view param = std::string_view(req.query).substr(start, end - start);
    if (param.rfind("Qualifier=", 0) == 0) {
      qualifier = param.substr(10);
      for (std::size_t p; (p = qualifier.find("%24")) != std::string::npos;) qualifier.replace(p, 3, "$");
    }
    start = end + 1;
  }
  // Lambda's name rules (after an ARN prefix): letters, digits, '-' and '_', at most 64.
  const std::string bare = name.substr(name.rfind(':') == std::string::npos ? 0 : name.rfind(':') + 1);
  const bool valid_name = !bare.empty() && bare.size() <= 64 &&
                          std::all_of(bare.begin(), bare.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; });
  if (!valid_name)
    return reply.send(aws_error(400, "ValidationException",
                                "1 validation error detected: Value at 'functionName' failed to satisfy constraint: "
                                "Member must satisfy regular expression pattern"));
  function* fn = find(name);
  if (!fn || (!qualifier.empty() && qualifier != "$LATEST"))
    return reply.send(aws_error(404, "ResourceNotFoundException",
                                "Function not found: " + arn(name) + (qualifier.empty() ? "" : ":" + qualifier)));
  const std::string* type = req.header("x-amz-invocation-type");
  if (type && *type != "RequestResponse" && *type != "Event" && *type != "DryRun")
    return reply.send(aws_error(400, "InvalidParameterValueException",
                                "1 validation error detected: Value '" + type->substr(0, 64) +
                                    "' at 'invocationType' failed to satisfy constraint: Member must satisfy enum "
                                    "value set: [Event, RequestResponse, DryRun]"));
  // X-Amz-Client-Context: base64 of a JSON object, at most 3,583 bytes.
  if (const std::string* context = req.header("x-amz-client-context")) {
    bool ok = context->size() <= 3583;
    try {
      const cppless::byte_buffer decoded = cppless::base64_decode(*context);
      ok = ok && json::parse(std::string_view(reinterpret_cast<const char*>(decoded.data()), decoded.size()), nullptr,
                             false).is_object();
    } catch (const cppless::error&) {
      ok = false;
    }
    if (!ok)
      return reply.send(aws_error(400, "InvalidRequestContentException",
                                  "Client context must be a valid Base64-encoded JSON object."));
  }
  // The payload must be JSON (an empty one is taken as {}).
  if (!req.body.empty() && json::parse(req.body, nullptr, false).is_discarded())
    return reply.send(aws_error(400, "InvalidRequestContentException", "Could not parse request body into json"));
  // Asynchronous (Event) invocations take at most 1 MB (256 KB until 2025): Lambda answers 413.
  if (type && *type == "Event" && req.body.size() > options_.max_event_payload)
    return reply.send(aws_error(413, "RequestEntityTooLargeException",
                                "Request must be smaller than " + std::to_string(options_.max_event_payload) +
                                    " bytes for the InvokeAsync operation"));
  if (req.body.size() > options_.max_payload)
    return reply.send(aws_error(413, "RequestEntityTooLargeException",
                                "Request must be smaller than " + std::to_string(options_.max_payload) +
                                    " bytes for the InvokeFunction operation"));
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if (!it->function.empty() && it->function != fn->name) continue;
    const fault f = *it;
    if (--it->count == 0) faults_.erase(it);
    if (f.drop) {
      ++counters_.dropped;
      return reply.drop();
    }
    if (f.status == 429) ++counters_.throttled;
    return reply.send(aws_error(f.status, f.status == 429 ? "TooManyRequestsException" : "ServiceException",
                                f.status == 429 ? "Rate Exceeded." : "Injected service error"));
  }
  if (type && *type == "DryRun") return reply.send({204, {{"x-amzn-RequestId", uuid()}}, ""});
  auto inv = std::make_shared<invocation>();
  inv->id = uuid();
  inv->payload = std::move(req.body);
  if (inv->payload.empty()) inv->payload = "{}";
  inv->fn = fn;
  inv->received = steady::now();
  const std::string* log_type = req.header("x-amz-log-type");
  inv->tail = log_type && *log_type == "Tail";
  if (type && *type == "Event") {
    reply.send({202, {{"x-amzn-RequestId", inv->id}}, ""});
  } else {
    inv->reply = reply;
  }
  ++counters_.invocations;
  fn->queue.push_back(std::move(inv));
  dispatch(*fn);
}

void lambda_service::dispatch(function& fn) {
  // Retire idle environments running replaced code.
  for (auto& env : std::vector(fn.envs))
    if (env->generation != fn.generation && !env->current && !env->dead) retire(*env);
  for (auto& env : fn.envs) {
    if (fn.queue.empty()) break;
    if (env->waiting && !env->current && !env->dead && env->generation == fn.generation) {
      auto inv = std::move(fn.queue.front());
      fn.queue.pop_front();
      assign(env, std::move(inv));
    }
  }
  std::size_t starting = 0, live = 0;
  for (auto& env : fn.envs) {
    if (env->dead || env->generation != fn.generation) continue;
    ++live;
    if (!env->current && !env->waiting) ++starting;
  }
  // A cold start for every queued call no environment will take, up to the concurrency.
  while (fn.queue.size() > starting && live < fn.concurrency) {
    spawn(fn);
    ++starting;
    ++live;
  }
  if (options_.throttle) {
    while (fn.queue.size() > starting) {
      auto inv = std::move(fn.queue.back());
      fn.queue.pop_back();
      ++counters_.throttled;
      inv->done = true;
      inv->reply.send(aws_error(429, "TooManyRequestsException", "Rate Exceeded."));
    }
  }
}

void lambda_service::spawn(function& fn) {
  auto env = std::make_shared<environment>();
  env->id = next_env_++;
  env->fn = &fn;
  env->generation = fn.generation;
  env->spawned = steady::now();
  std::weak_ptr<environment> weak = env;
  env->port = loop_.listen(0, [this, weak](http_request&& req, reply_to reply) {
    if (auto e = weak.lock()) runtime_request(e, std::move(req), reply);
  });
  // The environment of a provided.al2023 function, as far as a process on this machine can have it.
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    const std::string key(kv.substr(0, eq));
    if (key == "PATH" || key == "HOME" || key == "LANG" || key == "TZ" || key.rfind("ASAN_", 0) == 0 ||
        key.rfind("UBSAN_", 0) == 0 || key.rfind("LLVM_PROFILE", 0) == 0)
      vars[key] = std::string(kv.substr(eq + 1));
  }
  for (auto& [k, v] : options_.extra_env) vars[k] = v;
  vars["AWS_LAMBDA_RUNTIME_API"] = "127.0.0.1:" + std::to_string(env->port);
  vars["AWS_LAMBDA_FUNCTION_NAME"] = fn.name;
  vars["AWS_LAMBDA_FUNCTION_VERSION"] = "$LATEST";
  vars["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = std::to_string(fn.memory);
  vars["AWS_LAMBDA_LOG_GROUP_NAME"] = "/aws/lambda/" + fn.name;
  vars["AWS_LAMBDA_LOG_STREAM_NAME"] = "local/" + std::to_string(env->id);
  vars["AWS_LAMBDA_INITIALIZATION_TYPE"] = "on-demand";
  vars["AWS_REGION"] = vars["AWS_DEFAULT_REGION"] = options_.region;
  vars["AWS_EXECUTION_ENV"] = "AWS_Lambda_" + fn.runtime;
  vars["LAMBDA_TASK_ROOT"] = fn.task_root;
  vars["LAMBDA_RUNTIME_DIR"] = fn.task_root;
  vars["_HANDLER"] = fn.handler;
  vars["LD_LIBRARY_PATH"] = fn.task_root + "/lib:" + fn.task_root;
  for (auto& [k, v] : fn.env) vars[k] = v;
  std::vector<std::string> strings;
  for (auto& [k, v] : vars) strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) out[0] = out[1] = -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (out[1] >= 0) {
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  }
  posix_spawn_file_actions_addchdir_np(&actions, fn.task_root.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);  // the server blocks SIGCHLD; children must not inherit that
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  std::string exe = fn.executable;
  char* argv[] = {exe.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (out[1] >= 0) ::close(out[1]);
  if (rc != 0) {
    if (out[0] >= 0) ::close(out[0]);
    loop_.stop_listening(env->port);
    std::fprintf(stderr, "lambda_server: cannot start %s: %s\n", exe.c_str(), std::strerror(rc));
    if (!fn.queue.empty()) {
      auto inv = std::move(fn.queue.front());
      fn.queue.pop_front();
      fail_invocation(*inv, "Runtime.InvalidEntrypoint", "RequestId: " + inv->id + " Error: fork/exec " + exe + ": " + std::strerror(rc));
    }
    return;
  }
  env->pid = pid;
  if (out[0] >= 0) {
    const bool forward = options_.forward_output;
    env->output_fd = out[0];
    loop_.watch_output(out[0], [weak, forward](std::string_view bytes) {
      if (forward && !bytes.empty()) [[maybe_unused]] auto n = ::write(2, bytes.data(), bytes.size());
      auto e = weak.lock();
      if (!e) return;
      if (bytes.empty()) e->output_fd = -1;  // end of file: the loop closed it
      else if (e->log.size() < 65536) e->log.append(bytes);
    });
  }
  fn.envs.push_back(env);
  by_pid_[pid] = env;
  ++counters_.cold_starts;
}

void lambda_service::assign(const std::shared_ptr<environment>& shared_env, std::shared_ptr<invocation> inv) {
  environment& env = *shared_env;
  function& fn = *env.fn;
  env.current = inv;
  env.waiting = false;
  env.log.clear();
  inv->env = shared_env;
  inv->started = steady::now();
  const long long deadline = epoch_ms() + static_cast<long long>(fn.timeout) * 1000;
  http_response r;
  r.headers = {{"Content-Type", "application/json"},
               {"Lambda-Runtime-Aws-Request-Id", inv->id},
               {"Lambda-Runtime-Deadline-Ms", std::to_string(deadline)},
               {"Lambda-Runtime-Invoked-Function-Arn", arn(fn.name)},
               {"Lambda-Runtime-Trace-Id", "Root=1-" + inv->id.substr(0, 8) + "-" + inv->id.substr(9, 4) + ";Sampled=0"}};
  r.body = inv->payload;
  inv->payload.clear();
  std::weak_ptr<invocation> weak = inv;
  inv->timer = loop_.after(std::chrono::seconds(fn.timeout), [this, weak] {
    if (auto i = weak.lock()) timed_out(i);
  });
  auto next = std::move(env.next);
  env.next = {};
  next.send(std::move(r));
}

void lambda_service::finish(invocation& inv, int status, std::string body, const std::string& function_error) {
  if (inv.done) return;
  inv.done = true;
  if (inv.timer) loop_.cancel(inv.timer);
  auto env = inv.env.lock();
  http_response r;
  r.status = status;
  r.headers = {{"Content-Type", "application/json"}, {"x-amzn-RequestId", inv.id}, {"X-Amz-Executed-Version", "$LATEST"}};
  if (!function_error.empty()) {
    r.headers.emplace_back("X-Amz-Function-Error", function_error);
    ++counters_.errors;
  }
  if (inv.tail && env) {
    if (env->output_fd >= 0) loop_.drain_output(env->output_fd);
    const auto began = inv.started == steady::time_point{} ? inv.received : inv.started;
    const double ms = std::chrono::duration<double, std::milli>(steady::now() - began).count();
    char report[512];
    const bool cold = !env->reported_init;
    long billed = static_cast<long>(std::ceil(ms + (cold ? env->init_ms : 0)));
    std::snprintf(report, sizeof report,
                  "END RequestId: %s\nREPORT RequestId: %s\tDuration: %.2f ms\tBilled Duration: %ld ms\tMemory Size: %u "
                  "MB\tMax Memory Used: %ld MB\t",
                  inv.id.c_str(), inv.id.c_str(), ms, std::max(1L, billed), env->fn->memory, max_rss_mb(env->pid));
    std::string log = "START RequestId: " + inv.id + " Version: $LATEST\n" + env->log + report;
    if (cold) {
      char init[64];
      std::snprintf(init, sizeof init, "Init Duration: %.2f ms\t", env->init_ms);
      log += init;
    }
    log += "\n";
    if (log.size() > 4096) log = log.substr(log.size() - 4096);
    r.headers.emplace_back("X-Amz-Log-Result", base64(log));
  }
  if (env) env->reported_init = true;
  r.body = std::move(body);
  inv.reply.send(std::move(r));
}

void lambda_service::fail_invocation(invocation& inv, const std::string& type, const std::string& message) {
  finish(inv, 200, json{{"errorType", type}, {"errorMessage", message}}.dump(), "Unhandled");
}

void lambda_service::timed_out(const std::shared_ptr<invocation>& inv) {
  inv->timer = 0;
  if (inv->done) return;
  ++counters_.timeouts;
  auto env = inv->env.lock();
  char msg[160];
  std::snprintf(msg, sizeof msg, "RequestId: %s Error: Task timed out after %u.00 seconds", inv->id.c_str(),
                inv->fn->timeout);
  fail_invocation(*inv, "Sandbox.Timedout", msg);
  if (env) {
    env->current.reset();
    retire(*env);
  }
}

void lambda_service::retire(environment& env) {
  if (env.dead) return;
  env.dead = env.killed = true;
  if (env.pid > 0) ::kill(env.pid, SIGKILL);
}

void lambda_service::child_exited(int pid, int status) {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end()) return;
  auto env = it->second;
  by_pid_.erase(it);
  env->dead = true;
  loop_.stop_listening(env->port);
  function& fn = *env->fn;
  std::erase(fn.envs, env);
  const std::string how = WIFSIGNALED(status) ? "signal: " + std::string(strsignal(WTERMSIG(status)))
                                              : "exit status " + std::to_string(WEXITSTATUS(status));
  if (env->current) {
    auto inv = std::move(env->current);
    fail_invocation(*inv, "Runtime.ExitError", "RequestId: " + inv->id + " Error: Runtime exited with error: " + how);
  } else if (!env->initialized && !env->killed && !fn.queue.empty()) {
    // Died during init: the call that started it fails, or every retry would start another.
    auto inv = std::move(fn.queue.front());
    fn.queue.pop_front();
    inv->env = env;
    fail_invocation(*inv, "Runtime.ExitError",
                    "RequestId: " + inv->id + " Error: Runtime exited during init: " + how + "\n" + env->log.substr(0, 1024));
  }
  dispatch(fn);
}

void lambda_service::runtime_request(const std::shared_ptr<environment>& env, http_request&& req, reply_to reply) {
  static constexpr std::string_view base = "/2018-06-01/runtime/";
  if (req.path.rfind(base, 0) != 0) return reply.send({404, {}, R"({"errorType":"NotFound"})"});
  const std::string rest = req.path.substr(base.size());
  function& fn = *env->fn;
  if (req.method == "GET" && rest == "invocation/next") {
    if (!env->initialized) {
      env->initialized = true;
      env->init_ms = std::chrono::duration<double, std::milli>(steady::now() - env->spawned).count();
    }
    if (env->current) {  // asked for more work without answering: the call is lost
      auto inv = std::move(env->current);
      fail_invocation(*inv, "Runtime.InvalidResponse", "RequestId: " + inv->id + " Error: the runtime asked for the next event without answering this one");
    }
    env->next = reply;
    env->waiting = true;
    return dispatch(fn);
  }
  if (req.method == "POST" && rest == "init/error") {
    reply.send({202, {{"Content-Type", "application/json"}}, R"({"status":"OK"})"});
    const std::string* type = req.header("lambda-runtime-function-error-type");
    auto doc = json::parse(req.body, nullptr, false);
    std::string error_type = doc.is_object() ? doc.value("errorType", type ? *type : "Runtime.Unknown") : "Runtime.Unknown";
    std::string message = doc.is_object() ? doc.value("errorMessage", "") : req.body;
    if (!fn.queue.empty()) {
      auto inv = std::move(fn.queue.front());
      fn.queue.pop_front();
      inv->env = env;
      finish(*inv, 200, json{{"errorType", error_type}, {"errorMessage", message}}.dump(), "Unhandled");
    }
    env->initialized = true;  // reported: not an unexplained exit
    retire(*env);
    return;
  }
  static constexpr std::string_view inv_prefix = "invocation/";
  if (req.method == "POST" && rest.rfind(inv_prefix, 0) == 0) {
    const auto slash = rest.find('/', inv_prefix.size());
    const std::string id = rest.substr(inv_prefix.size(), slash - inv_prefix.size());
    const std::string what = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (!env->current || env->current->id != id)
      return reply.send({400, {{"Content-Type", "application/json"}},
                         json{{"errorMessage", "Invalid request ID"}, {"errorType", "InvalidRequestID"}}.dump()});
    if (what == "response") {
      if (req.body.size() > options_.max_payload)
        return reply.send({413, {{"Content-Type", "application/json"}},
                           json{{"errorMessage", "Exceeded maximum allowed payload size (" +
                                                     std::to_string(options_.max_payload) + " bytes)."},
                                {"errorType", "RequestEntityTooLarge"}}
                               .dump()});
      reply.send({202, {{"Content-Type", "application/json"}}, R"({"status":"OK"})"});
      auto inv = std::move(env->current);
      finish(*inv, 200, std::move(req.body), "");
      return dispatch(fn);
    }
    if (what == "error") {
      reply.send({202, {{"Content-Type", "application/json"}}, R"({"status":"OK"})"});
      auto inv = std::move(env->current);
      auto doc = json::parse(req.body, nullptr, false);
      std::string body = req.body;
      if (!doc.is_object()) {
        const std::string* type = req.header("lambda-runtime-function-error-type");
        body = json{{"errorType", type ? *type : "Runtime.Unknown"}, {"errorMessage", req.body}}.dump();
      }
      finish(*inv, 200, std::move(body), "Unhandled");
      return dispatch(fn);
    }
  }
  reply.send({404, {{"Content-Type", "application/json"}}, R"({"errorType":"NotFound","errorMessage":"unknown path"})"});
}

}  // namespace lambda_server
