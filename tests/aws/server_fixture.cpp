#include "server_fixture.hpp"

#include <curl/curl.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace aws_test {

namespace {
std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

std::size_t collect(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}
}  // namespace

std::string http_get_or_post(const std::string& url, const std::string* post_body) {
  CURL* c = curl_easy_init();
  std::string out;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
  if (post_body) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, post_body->c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(post_body->size()));
  }
  const CURLcode rc = curl_easy_perform(c);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) throw std::runtime_error(std::string("test http: ") + curl_easy_strerror(rc));
  return out;
}

local_lambda::local_lambda(std::vector<std::string> args, bool serve_self) {
  char tmpl[] = "/tmp/cppless-aws-test.XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  const std::string port_file = dir_ + "/port";
  std::vector<std::string> argv_s = {LAMBDA_SERVER, "--port", "0", "--port-file", port_file,
                                     "--key", std::string(access_key) + ":" + secret_key, "--work-dir", dir_ + "/work",
                                     "--tls", dir_ + "/ca.pem"};
  if (serve_self) {
    argv_s.push_back("--any-function");
    argv_s.push_back(self_exe());
  }
  if (std::getenv("CPPLESS_TEST_VERBOSE")) argv_s.push_back("--forward-output");
  for (auto& a : args) argv_s.push_back(a);
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  const int rc = posix_spawn(&pid_, LAMBDA_SERVER, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start lambda_server");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in(port_file);
    if (in >> port_) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!port_) throw std::runtime_error("lambda_server did not start");
}

local_lambda::~local_lambda() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status;
    ::waitpid(pid_, &status, 0);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void local_lambda::export_env() const {
  ::setenv("AWS_ENDPOINT_URL_LAMBDA", endpoint().c_str(), 1);
  ::setenv("AWS_CA_BUNDLE", ca_file().c_str(), 1);
  ::setenv("AWS_ACCESS_KEY_ID", access_key, 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", secret_key, 1);
  ::unsetenv("AWS_SESSION_TOKEN");
  ::setenv("AWS_REGION", "us-east-1", 1);
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent", 1);
  ::setenv("AWS_CONFIG_FILE", "/nonexistent", 1);
}

void local_lambda::inject(const std::string& fault_json) const {
  http_get_or_post(plain_endpoint() + "/_cppless/faults", &fault_json);
}

std::string local_lambda::stats() const { return http_get_or_post(plain_endpoint() + "/_cppless/stats", nullptr); }

}  // namespace aws_test
