// lambda_server — a local, Lambda-compatible server for tests and for trying the AWS backend
// offline. Speaks the Invoke API (HTTP/1.1 and HTTP/2 h2c, SigV4-checked) and the control-plane
// calls of a deployment on one loopback port, and the Runtime API to the environments it runs.
//
//   lambda_server [--port 0] [--port-file F] [--tls CA.pem] [--key AKID:SECRET]... [--no-auth]
//                 [--concurrency 4] [--throttle] [--region us-east-1] [--work-dir DIR]
//                 [--function NAME=EXECUTABLE[,timeout=S][,memory=MB][,concurrency=N]]...
//                 [--any-function EXECUTABLE] [--timeout S] [--env K=V]... [--forward-output]
//
// Prints "lambda_server listening on 127.0.0.1:PORT" once ready (and writes PORT to the port
// file). With --tls, the port also takes HTTPS (h2 or HTTP/1.1 by ALPN) with a certificate made
// at start-up and written to CA.pem for clients to trust (AWS_CA_BUNDLE); plain HTTP still works. Exits on SIGTERM/SIGINT, killing the environments it started. Test hooks (unsigned):
// POST /_cppless/faults {"status":429|500|503,"count":N} or {"drop":true,"count":N};
// GET /_cppless/stats.
#include "lambda.hpp"
#include "tls.hpp"

#include <openssl/ssl.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

namespace {

void usage() {
  std::fprintf(stderr, "usage: lambda_server [--port P] [--port-file F] [--tls CA.pem] [--key AKID:SECRET] [--no-auth] "
                       "[--concurrency N] [--throttle] [--region R] [--work-dir D] "
                       "[--function NAME=EXE[,timeout=S][,memory=MB][,concurrency=N]] [--any-function EXE] "
                       "[--timeout S] [--env K=V] [--forward-output]\n");
  std::exit(2);
}

std::string absolute(const std::string& p) { return std::filesystem::absolute(p).lexically_normal().string(); }

}  // namespace

int main(int argc, char** argv) {
  using namespace lambda_server;
  server_options options;
  int port = 0;
  std::string port_file, ca_file;
  std::vector<function> functions;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--port") port = std::atoi(value().c_str());
    else if (a == "--port-file") port_file = value();
    else if (a == "--tls") ca_file = value();
    else if (a == "--key") {
      const std::string kv = value();
      const auto colon = kv.find(':');
      if (colon == std::string::npos) usage();
      options.keys[kv.substr(0, colon)] = kv.substr(colon + 1);
    } else if (a == "--no-auth") options.check_signatures = false;
    else if (a == "--concurrency") options.concurrency = static_cast<unsigned>(std::atoi(value().c_str()));
    else if (a == "--throttle") options.throttle = true;
    else if (a == "--region") options.region = value();
    else if (a == "--work-dir") options.work_dir = value();
    else if (a == "--any-function") options.any_function = absolute(value());
    else if (a == "--timeout") options.default_timeout = static_cast<unsigned>(std::atoi(value().c_str()));
    else if (a == "--forward-output") options.forward_output = true;
    else if (a == "--env") {
      const std::string kv = value();
      const auto eq = kv.find('=');
      if (eq == std::string::npos) usage();
      options.extra_env[kv.substr(0, eq)] = kv.substr(eq + 1);
    } else if (a == "--function") {
      std::string spec = value();
      function f;
      std::string first = spec.substr(0, spec.find(','));
      const auto eq = first.find('=');
      if (eq == std::string::npos) usage();
      f.name = first.substr(0, eq);
      f.executable = absolute(first.substr(eq + 1));
      f.task_root = f.executable.substr(0, f.executable.rfind('/'));
      f.timeout = 0;
      for (std::size_t p = spec.find(','); p != std::string::npos;) {
        const auto q = spec.find(',', p + 1);
        const std::string kv = spec.substr(p + 1, q == std::string::npos ? std::string::npos : q - p - 1);
        const auto e = kv.find('=');
        const unsigned v = e == std::string::npos ? 0 : static_cast<unsigned>(std::atoi(kv.c_str() + e + 1));
        if (kv.rfind("timeout=", 0) == 0) f.timeout = v;
        else if (kv.rfind("memory=", 0) == 0) f.memory = v;
        else if (kv.rfind("concurrency=", 0) == 0) f.concurrency = v;
        else usage();
        p = q;
      }
      functions.push_back(std::move(f));
    } else usage();
  }
  if (options.keys.empty() && options.check_signatures) {
    std::fprintf(stderr, "lambda_server: give --key AKID:SECRET (the credentials clients sign with) or --no-auth\n");
    return 2;
  }
  const bool own_work_dir = options.work_dir.empty();
  if (own_work_dir) {
    char tmpl[] = "/tmp/lambda_server.XXXXXX";
    if (!::mkdtemp(tmpl)) return 1;
    options.work_dir = tmpl;
  }
  std::filesystem::create_directories(options.work_dir);

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  // Declared before the loop, so it outlives the connections that refer to it.
  std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)> tls(nullptr, SSL_CTX_free);
  try {
    event_loop loop;
    const unsigned default_timeout = options.default_timeout;
    lambda_service service(loop, options);
    for (auto& f : functions) {
      if (!f.timeout) f.timeout = default_timeout;
      service.add_function(std::move(f));
    }
    if (!ca_file.empty()) tls.reset(make_tls_context(ca_file));
    const int bound = loop.listen(port, [&service](http_request&& req, reply_to reply) {
      service.handle(std::move(req), std::move(reply));
    }, tls.get());
    // Stop cleanly on SIGTERM/SIGINT: the service's destructor kills the environments.
    const int stop_fd = ::signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    loop.watch_output(stop_fd, [&loop](std::string_view) { loop.stop(); });
    if (!port_file.empty()) {
      const std::string tmp = port_file + ".tmp";
      std::ofstream(tmp) << bound << "\n";
      std::filesystem::rename(tmp, port_file);
    }
    std::printf("lambda_server listening on 127.0.0.1:%d\n", bound);
    std::fflush(stdout);
    loop.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lambda_server: %s\n", e.what());
    return 1;
  }
  std::error_code ec;
  if (own_work_dir) std::filesystem::remove_all(options.work_dir, ec);
  return 0;
}
