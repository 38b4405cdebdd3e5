// Region, endpoint and credentials, resolved like the AWS CLI (see cppless/aws/settings.hpp).
#include <cppless/aws/settings.hpp>
#include <cppless/error.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string_view>

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
    out.creds = {id, secret, env("AWS_SESSION_TOKEN"), "environment"};
  } else if (!get(cred_section, "aws_access_key_id").empty()) {
    out.creds = {get(cred_section, "aws_access_key_id"), get(cred_section, "aws_secret_access_key"),
                 get(cred_section, "aws_session_token"), credentials_path + " [" + out.profile + "]"};
  } else if (!get(conf_section, "aws_access_key_id").empty()) {
    out.creds = {get(conf_section, "aws_access_key_id"), get(conf_section, "aws_secret_access_key"),
                 get(conf_section, "aws_session_token"), config_path + " [" + out.profile + "]"};
  } else {
    throw error("cppless aws: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or configure profile '" +
                out.profile + "' in " + credentials_path + " (credential_process, SSO and instance roles are not read)");
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

std::string settings::describe() const {
  return "region " + region + ", endpoint " + endpoint + ", key " + creds.access_key_id + " from " + creds.source +
         (creds.session_token.empty() ? "" : " (with session token)");
}

}  // namespace cppless::aws
