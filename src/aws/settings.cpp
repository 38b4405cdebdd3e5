// Region, endpoint and credentials, resolved like the AWS CLI (see cppless/aws/settings.hpp).
#include <cppless/aws/settings.hpp>
#include <cppless/error.hpp>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

extern char** environ;

namespace cppless::aws {

namespace {

using section = std::map<std::string, std::string>;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

std::string home_file(const char* override_var, const char* relative) {
  if (auto v = env(override_var); !v.empty()) return v;
  if (auto home = env("HOME"); !home.empty()) return home + "/" + relative;
  return {};
}

// INI as the AWS CLI writes it: [section], key = value, '#' and ';' comments. Nested
// sub-sections (indented "s3 =" blocks) are skipped: nothing here needs them.
std::map<std::string, section> read_ini(const std::string& path) {
  std::map<std::string, section> out;
  std::ifstream in(path);
  std::string line, current;
  bool nested = false;
  while (std::getline(in, line)) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[' && t.back() == ']') {
      current = trim(std::string_view(t).substr(1, t.size() - 2));
      nested = false;
      continue;
    }
    const bool indented = line[0] == ' ' || line[0] == '\t';
    if (nested && indented) continue;
    const auto eq = t.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = trim(std::string_view(t).substr(0, eq));
    const std::string value = trim(std::string_view(t).substr(eq + 1));
    nested = value.empty();
    if (!nested) out[current][key] = value;
  }
  return out;
}

const section* find(const std::map<std::string, section>& ini, const std::string& name) {
  auto it = ini.find(name);
  return it == ini.end() ? nullptr : &it->second;
}

std::string get(const section* s, const char* key) {
  if (!s) return {};
  auto it = s->find(key);
  return it == s->end() ? std::string() : it->second;
}

// The command line of credential_process, split like the SDKs do (Python's shlex.split):
// whitespace separates words, single quotes keep everything, double quotes keep all but \" and
// \\, a backslash outside quotes escapes the next character. No shell runs it.
std::vector<std::string> split_command(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::exchange(word, {}));
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      const auto end = line.find('\'', i + 1);
      if (end == std::string::npos) throw error("cppless aws: credential_process: unmatched ' (the command line is not shown: it may hold secrets)");
      word.append(line, i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      for (++i;; ++i) {
        if (i >= line.size()) throw error("cppless aws: credential_process: unmatched \" (the command line is not shown: it may hold secrets)");
        if (line[i] == '"') break;
        if (line[i] == '\\' && i + 1 < line.size() && (line[i + 1] == '"' || line[i + 1] == '\\')) ++i;
        word += line[i];
      }
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

// Runs the profile's credential_process (the AWS CLI's "sourcing credentials with an external
// process"): it prints {"Version": 1, "AccessKeyId", "SecretAccessKey", "SessionToken"?,
// "Expiration"?} on stdout. A failure names the command (its first word), never its arguments,
// its stderr or its stdout (which may hold secrets).
credentials run_credential_process(const std::string& command, const std::string& source) {
  const std::vector<std::string> words = split_command(command);
  if (words.empty()) throw error("cppless aws: credential_process of " + source + " is empty");
  const std::string what = "cppless aws: credential_process '" + words[0] + "' of " + source;
  // A helper that does not finish (waiting for a login that never comes) is killed: nothing hangs.
  long timeout_s = 60;
  if (const std::string t = env("CPPLESS_CREDENTIAL_PROCESS_TIMEOUT_S"); !t.empty()) {
    char* end = nullptr;
    errno = 0;
    timeout_s = std::strtol(t.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || timeout_s <= 0 || timeout_s > 86'400) {
      throw error("cppless aws: CPPLESS_CREDENTIAL_PROCESS_TIMEOUT_S='" + t +
                  "' is not a number of seconds from 1 to 86400");
    }
  }
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw error(what + ": pipe: " + std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw error(what + ": pipe: " + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<char*> argv;
  std::vector<std::string> storage = words;
  for (auto& w : storage) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    throw error(what + " could not be started: " + std::strerror(rc));
  }
  // Both pipes are drained together, so a chatty stderr cannot block the process.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  std::string stdout_text, stderr_text;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  bool timed_out = false;
  for (int open = 2; open > 0;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now()).count();
    const int ready = left > 0 ? ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000))) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    if (ready == 0) {
      if (std::chrono::steady_clock::now() < give_up) continue;
      timed_out = true;
      ::kill(pid, SIGKILL);
      for (auto& f : fds)
        if (f.fd >= 0) ::close(f.fd);
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? stdout_text : stderr_text).append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    throw error(what + " did not finish within " + std::to_string(timeout_s) +
                " s and was stopped (CPPLESS_CREDENTIAL_PROCESS_TIMEOUT_S sets the limit)");
  // Its stderr is not quoted either: a helper may print tokens there (debug output, a login URL).
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw error(what + " failed (" +
                (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                   : "signal " + std::to_string(WTERMSIG(status))) +
                ")" +
                (stderr_text.empty() ? std::string()
                                     : "; it wrote " + std::to_string(stderr_text.size()) +
                                           " bytes on stderr, not shown here as they may hold secrets: run it "
                                           "yourself to read them"));
  const auto doc = nlohmann::json::parse(stdout_text, nullptr, false);
  if (!doc.is_object()) throw error(what + " did not print a JSON object");
  if (doc.value("Version", 0) != 1)
    throw error(what + " printed credentials of an unsupported Version (1 is expected)");
  credentials c;
  c.access_key_id = doc.value("AccessKeyId", "");
  c.secret_access_key = doc.value("SecretAccessKey", "");
  c.session_token = doc.value("SessionToken", "");
  c.expiration = doc.value("Expiration", "");
  c.source = "credential_process of " + source;
  if (c.access_key_id.empty() || c.secret_access_key.empty())
    throw error(what + " printed no AccessKeyId or SecretAccessKey");
  return c;
}

}  // namespace

settings settings::resolve() {
  settings out;
  out.profile = env("AWS_PROFILE");
  if (out.profile.empty()) out.profile = env("AWS_DEFAULT_PROFILE");
  const bool profile_named = !out.profile.empty();
  if (!profile_named) out.profile = "default";

  const std::string credentials_path = home_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials");
  const std::string config_path = home_file("AWS_CONFIG_FILE", ".aws/config");
  const auto credentials_ini = credentials_path.empty() ? decltype(read_ini("")){} : read_ini(credentials_path);
  const auto config_ini = config_path.empty() ? decltype(read_ini("")){} : read_ini(config_path);
  const section* cred_section = find(credentials_ini, out.profile);
  const section* conf_section =
      find(config_ini, out.profile == "default" ? std::string("default") : "profile " + out.profile);
  if (!conf_section && out.profile == "default") conf_section = find(config_ini, "profile default");
  if (profile_named && !cred_section && !conf_section)
    throw error("cppless aws: profile '" + out.profile + "' is in neither " + credentials_path + " nor " + config_path);

  // Credentials: the environment wins only as a complete pair, like the SDKs.
  if (auto id = env("AWS_ACCESS_KEY_ID"), secret = env("AWS_SECRET_ACCESS_KEY"); !id.empty() && !secret.empty()) {
    out.creds = {id, secret, env("AWS_SESSION_TOKEN"), "environment", ""};
  } else if (!get(cred_section, "aws_access_key_id").empty()) {
    out.creds = {get(cred_section, "aws_access_key_id"), get(cred_section, "aws_secret_access_key"),
                 get(cred_section, "aws_session_token"), credentials_path + " [" + out.profile + "]", ""};
  } else if (auto process = get(cred_section, "credential_process"); !process.empty()) {
    out.creds = run_credential_process(process, credentials_path + " [" + out.profile + "]");
  } else if (auto process_conf = get(conf_section, "credential_process"); !process_conf.empty()) {
    out.creds = run_credential_process(process_conf, config_path + " [" + out.profile + "]");
  } else if (!get(conf_section, "aws_access_key_id").empty()) {
    out.creds = {get(conf_section, "aws_access_key_id"), get(conf_section, "aws_secret_access_key"),
                 get(conf_section, "aws_session_token"), config_path + " [" + out.profile + "]", ""};
  } else {
    throw error("cppless aws: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or configure profile '" +
                out.profile + "' in " + credentials_path + " (SSO and instance roles are not read)");
  }
  if (out.creds.secret_access_key.empty())
    throw error("cppless aws: credentials from " + out.creds.source + " have a key id but no secret access key");

  out.region = env("AWS_REGION");
  if (out.region.empty()) out.region = env("AWS_DEFAULT_REGION");
  if (out.region.empty()) out.region = get(conf_section, "region");
  if (out.region.empty())
    throw error("cppless aws: no region: set AWS_REGION, or `region` for profile '" + out.profile + "' in " + config_path);

  out.endpoint = env("AWS_ENDPOINT_URL_LAMBDA");
  if (out.endpoint.empty()) out.endpoint = env("AWS_ENDPOINT_URL");
  if (out.endpoint.empty()) out.endpoint = get(conf_section, "endpoint_url");
  if (out.endpoint.empty()) out.endpoint = "https://lambda." + out.region + ".amazonaws.com";
  while (!out.endpoint.empty() && out.endpoint.back() == '/') out.endpoint.pop_back();
  if (out.endpoint.rfind("http://", 0) != 0 && out.endpoint.rfind("https://", 0) != 0)
    throw error("cppless aws: endpoint '" + out.endpoint + "' must start with http:// or https://");

  out.ca_bundle = env("AWS_CA_BUNDLE");
  if (out.ca_bundle.empty()) out.ca_bundle = get(conf_section, "ca_bundle");
  out.role_arn = env("CPPLESS_LAMBDA_ROLE");
  if (out.role_arn.empty()) out.role_arn = get(conf_section, "cppless_lambda_role");
  return out;
}

std::chrono::system_clock::time_point credentials::expires() const {
  // "2030-01-01T00:00:00Z", "2030-01-01T00:00:00.123Z" or "...+00:00" (always UTC from AWS).
  std::tm t{};
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (expiration.empty() || std::sscanf(expiration.c_str(), "%d-%d-%dT%d:%d:%d", &y, &mo, &d, &h, &mi, &sec) != 6)
    return std::chrono::system_clock::time_point::max();
  t.tm_year = y - 1900;
  t.tm_mon = mo - 1;
  t.tm_mday = d;
  t.tm_hour = h;
  t.tm_min = mi;
  t.tm_sec = sec;
  const std::time_t when = ::timegm(&t);
  if (when == static_cast<std::time_t>(-1)) return std::chrono::system_clock::time_point::max();
  return std::chrono::system_clock::from_time_t(when);
}

std::string settings::describe() const {
  return "region " + region + ", endpoint " + endpoint + ", key " + creds.access_key_id + " from " + creds.source +
         (creds.session_token.empty() ? "" : " (with session token)") +
         (creds.expiration.empty() ? "" : ", expiring " + creds.expiration);
}

std::string fallback_ca_bundle(const char* builtin, std::span<const char* const> candidates) {
  if (builtin && *builtin && ::access(builtin, R_OK) == 0) return {};
  for (const char* path : candidates)
    if (::access(path, R_OK) == 0) return path;
  return {};
}

}  // namespace cppless::aws
