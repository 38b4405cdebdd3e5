// Deployment to AWS Lambda: package (package.hpp), then create or update one function per entry.
//
// An unchanged build gives the same zip and the same CodeSha256: such functions are skipped. Each function gets the entry's memory, timeout (0: Lambda's 900 s maximum) and
// ephemeral storage, the executable's architecture, and CPPLESS_FUNCTION_ID /
// CPPLESS_FUNCTION_PREFIX in its environment (the runtime refuses at init to serve an entry its
// build lacks, and nested dispatch names functions like the host).
#include "deploy.hpp"

#include "manifest.hpp"
#include "package.hpp"
#include "s3_upload.hpp"
#include "signed_request.hpp"

#include <cppless/aws/naming.hpp>
#include <cppless/base64.hpp>
#include <cppless/aws/settings.hpp>

#include <curl/curl.h>
#include <nlohmann/json.hpp>
#include <openssl/sha.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <stdexcept>
#include <thread>

namespace cppless::tools {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct http_result {
  long status = 0;
  std::string body;
  json doc;
};

std::string b64(std::string_view in) {
  std::string out;
  base64_encode_append(std::as_bytes(std::span(in.data(), in.size())), out);
  return out;
}

std::string sha256_b64(const std::string& data) {
  unsigned char d[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), d);
  return b64(std::string(reinterpret_cast<char*>(d), sizeof d));
}

// The Lambda control plane, SigV4-signed by libcurl (signed_request.hpp).
class lambda_api {
 public:
  explicit lambda_api(aws::settings s) : s_(std::move(s)) {}

  http_result call(const std::string& method, const std::string& path, const std::string& body = {},
                   const std::string& progress_label = {}) {
    signed_request request;
    request.method = method;
    request.url = s_.endpoint + path;
    request.service = "lambda";
    request.headers = {"Content-Type: application/json"};
    if (method == "POST" || method == "PUT") request.body = &body;
    request.progress_label = progress_label;
    signed_response response = send(s_, request);
    http_result r;
    r.status = response.status;
    r.body = std::move(response.body);
    r.doc = json::parse(r.body, nullptr, false);
    return r;
  }

  // Throws with the service's message (never the request, which is signed with the secret).
  static void check(const http_result& r, const std::string& what) {
    if (r.status >= 200 && r.status < 300) return;
    std::string message = r.body.substr(0, 300);
    if (r.doc.is_object()) {
      for (const char* k : {"message", "Message"})
        if (r.doc.contains(k) && r.doc[k].is_string()) message = r.doc[k].get<std::string>();
    }
    throw std::runtime_error(what + ": HTTP " + std::to_string(r.status) + ": " + message);
  }

  // Calls that may meet a function still being updated (409) or a role not yet usable by
  // Lambda (400 "cannot be assumed"): both settle within seconds on the real service.
  http_result call_settled(const std::string& method, const std::string& path, const std::string& body,
                           const std::string& what, const std::string& progress = {}) {
    for (int attempt = 0;; ++attempt) {
      auto r = call(method, path, body, progress);
      const bool busy = r.status == 409 && method != "POST";
      const bool role_pending = r.status == 400 && r.body.find("cannot be assumed") != std::string::npos;
      if ((!busy && !role_pending) || attempt >= 30) {
        check(r, what);
        return r;
      }
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
  }

  const aws::settings& settings() const { return s_; }

 private:
  aws::settings s_;
};

// ---- deploy ----------------------------------------------------------------------------------

struct wanted {
  std::string name, id_hash;
  unsigned memory, timeout, storage;
  std::string arch;
};

json function_config(const wanted& w, const std::string& prefix, const std::string& role) {
  json doc = {{"Runtime", "provided.al2023"},
              {"Handler", "bootstrap"},
              {"MemorySize", w.memory},
              {"Timeout", w.timeout},
              {"EphemeralStorage", {{"Size", w.storage}}},
              {"Environment", {{"Variables", {{"CPPLESS_FUNCTION_ID", w.id_hash}, {"CPPLESS_FUNCTION_PREFIX", prefix}}}}},
              {"Description", "cppless function (" + prefix + ")"}};
  if (!role.empty()) doc["Role"] = role;
  return doc;
}

bool config_matches(const json& current, const wanted& w) {
  auto vars = current.value("Environment", json::object()).value("Variables", json::object());
  return current.value("MemorySize", 0u) == w.memory && current.value("Timeout", 0u) == w.timeout &&
         current.value("EphemeralStorage", json::object()).value("Size", 512u) == w.storage &&
         current.value("Runtime", "") == "provided.al2023" && vars.value("CPPLESS_FUNCTION_ID", "") == w.id_hash;
}

// Lambda applies a create or an update asynchronously (State Pending -> Active, LastUpdateStatus
// InProgress -> Successful): a call before that gets 409, or reaches the old code for seconds.
// Waits until the function is ready, at most `limit`; a Failed state ends the deployment with
// AWS's reason. Servers that report neither field count as ready.
void wait_until_ready(lambda_api& api, const std::string& name, std::chrono::seconds limit,
                      const std::string& version = {}) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  const bool tty = ::isatty(2);
  for (int poll = 0;; ++poll) {
    auto r = api.call("GET", "/2015-03-31/functions/" + name + "/configuration" +
                                 (version.empty() ? "" : "?Qualifier=" + version));
    lambda_api::check(r, "get " + name);
    const std::string state = r.doc.value("State", "Active"), update = r.doc.value("LastUpdateStatus", "Successful");
    auto reason = [&](const char* code, const char* text) {
      return r.doc.value(code, std::string("?")) + ": " + r.doc.value(text, std::string("no reason given"));
    };
    if (state == "Failed")
      throw std::runtime_error(name + " failed to become active (" + reason("StateReasonCode", "StateReason") + ")");
    if (update == "Failed")
      throw std::runtime_error(name + ": its update failed (" +
                               reason("LastUpdateStatusReasonCode", "LastUpdateStatusReason") + ")");
    if (state == "Active" && update == "Successful") {
      if (tty && poll > 0) std::cerr << "\r\033[K";
      return;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error(name + " is still " + state + " (last update " + update + ") after " +
                               std::to_string(limit.count()) + " s (--wait sets the limit)");
    if (tty) std::cerr << "\r\033[Kwaiting for " << name << " (" << state << ", update " << update << ")" << std::flush;
    std::this_thread::sleep_for(poll < 4 ? std::chrono::milliseconds(250) : std::chrono::seconds(1));
  }
}

// Lambda's limit for a zip sent in the request itself; above it the package goes through S3.
constexpr std::size_t direct_upload_limit = 50u * 1024 * 1024;

// --publish ALIAS: a version of the function's current code and configuration, and ALIAS pointing
// at it (created, or moved), so callers that name the alias (aws_options::qualifier) get exactly
// this deployment while the next one is rolled out.
void publish(lambda_api& api, const std::string& name, const std::string& alias, std::chrono::seconds wait_limit) {
  const std::string path = "/2015-03-31/functions/" + name;
  auto v = api.call_settled("POST", path + "/versions", "{}", "publish a version of " + name);
  const std::string version = v.doc.value("Version", "");
  if (version.empty()) throw std::runtime_error("publish a version of " + name + ": no Version in the answer");
  wait_until_ready(api, name, wait_limit, version);
  const json doc = {{"Name", alias}, {"FunctionVersion", version}};
  auto current = api.call("GET", path + "/aliases/" + alias);
  if (current.status == 404)
    api.call_settled("POST", path + "/aliases", doc.dump(), "create alias " + alias + " of " + name);
  else {
    lambda_api::check(current, "get alias " + alias + " of " + name);
    api.call_settled("PUT", path + "/aliases/" + alias, doc.dump(), "update alias " + alias + " of " + name);
  }
  std::cout << "published " << name << ":" << version << " as " << alias << "\n";
}

int deploy(const std::string& exe, std::string prefix, std::string role, std::string bucket, bool dry_run,
           const package_options& packaging, std::chrono::seconds wait_limit, const std::string& alias) {
  // Packaged first: a build the Lambda OS cannot start is refused before anything else.
  const lambda_package package = build_package(exe, packaging);
  const json manifest = read_function_manifest(exe);
  if (prefix.empty()) prefix = fs::path(exe).filename().string();
  const std::string& arch_of_build = package.architecture;
  std::vector<wanted> functions;
  for (const auto& e : manifest["entry_points"]) {
    const auto& c = e["config"];
    wanted w;
    const std::string arch_cfg = c.value("architecture", "native");
    const std::string key = aws::config_key(c.value("memory", 1024u), c.value("timeout", 0u),
                                            c.value("ephemeral_storage", 512u), arch_cfg);
    w.name = aws::function_name(prefix, e["id"].get<std::string>(), key);
    w.id_hash = e["hash"].get<std::string>();
    w.memory = std::clamp(c.value("memory", 1024u), 128u, 10240u);
    w.timeout = c.value("timeout", 0u) ? std::min(c.value("timeout", 0u), 900u) : 900u;
    w.storage = std::clamp(c.value("ephemeral_storage", 512u), 512u, 10240u);
    w.arch = arch_cfg == "native" ? arch_of_build : arch_cfg;
    if (w.arch != arch_of_build)
      throw std::runtime_error(e["function_name"].get<std::string>() + " asks for " + w.arch + " but " + exe +
                               " is built for " + arch_of_build +
                               "; build it for that architecture with the function build (docs/aws.md)");
    functions.push_back(w);
  }
  const std::string& zip = package.zip;
  const std::vector<std::string>& contents = package.contents;
  const std::string sha = sha256_b64(zip);
  std::cerr << "cppless deploy: " << exe << " -> " << functions.size() << " function(s), package " << zip.size() / 1024
            << " KiB (" << contents.size() << " files, " << arch_of_build << ")\n";
  if (const char* b = std::getenv("CPPLESS_DEPLOY_BUCKET"); bucket.empty() && b) bucket = b;
  if (zip.size() > direct_upload_limit && bucket.empty())
    throw std::runtime_error("the package (" + std::to_string(zip.size() >> 20) +
                             " MiB) is over Lambda's 50 MB limit for direct uploads: name an S3 bucket in the functions' "
                             "region to deploy it from (--s3-bucket or CPPLESS_DEPLOY_BUCKET)");
  if (dry_run) {
    for (auto& f : functions) std::cout << f.name << "\n";
    for (auto& c : contents) std::cerr << "  " << c << "\n";
    return 0;
  }
  aws::settings s = aws::settings::resolve();
  if (role.empty()) role = s.role_arn;
  lambda_api api(s);
  // The code as the requests name it: in the request, or (with a bucket) uploaded to S3 first,
  // once, and only if some function needs new code.
  json code;
  auto code_spec = [&]() -> const json& {
    if (!code.is_null()) return code;
    if (bucket.empty()) {
      code = {{"ZipFile", b64(zip)}};
    } else {
      const s3_object object = upload_package(s, bucket, prefix, zip);
      code = {{"S3Bucket", object.bucket}, {"S3Key", object.key}};
    }
    return code;
  };
  int created = 0, updated = 0, unchanged = 0;
  for (const auto& w : functions) {
    const std::string path = "/2015-03-31/functions/" + w.name;
    auto current = api.call("GET", path + "/configuration");
    json config = function_config(w, prefix, role);
    if (current.status == 404) {
      if (role.empty())
        throw std::runtime_error("creating " + w.name + " needs an execution role: set CPPLESS_LAMBDA_ROLE or --role");
      config["FunctionName"] = w.name;
      config["Architectures"] = json::array({w.arch});
      config["Code"] = code_spec();
      api.call_settled("POST", "/2015-03-31/functions", config.dump(), "create " + w.name, w.name);
      wait_until_ready(api, w.name, wait_limit);
      std::cout << "created   " << w.name << "\n";
      ++created;
      if (!alias.empty()) publish(api, w.name, alias, wait_limit);
      continue;
    }
    lambda_api::check(current, "get " + w.name);
    const bool same_code = current.doc.value("CodeSha256", "") == sha &&
                           current.doc.value("Architectures", json::array({"x86_64"}))[0] == w.arch;
    const bool same_config = config_matches(current.doc, w);
    if (same_code && same_config) {
      std::cout << "unchanged " << w.name << "\n";
      ++unchanged;
      if (!alias.empty()) publish(api, w.name, alias, wait_limit);  // Lambda returns the same version
      continue;
    }
    if (!same_code) {
      json update = code_spec();
      update["Architectures"] = json::array({w.arch});
      api.call_settled("PUT", path + "/code", update.dump(), "update code of " + w.name, w.name);
      wait_until_ready(api, w.name, wait_limit);
    }
    if (!same_config) {
      config.erase("Role");  // keep the role a function has
      api.call_settled("PUT", path + "/configuration", config.dump(), "update configuration of " + w.name);
      wait_until_ready(api, w.name, wait_limit);
    }
    std::cout << "updated   " << w.name << "\n";
    ++updated;
    if (!alias.empty()) publish(api, w.name, alias, wait_limit);
  }
  std::cerr << "cppless deploy: " << created << " created, " << updated << " updated, " << unchanged << " unchanged ("
            << s.describe() << ")\n";
  return 0;
}

std::vector<json> list_functions(lambda_api& api, const std::string& prefix) {
  std::vector<json> out;
  std::string marker;
  for (;;) {
    auto r = api.call("GET", "/2015-03-31/functions/?MaxItems=50" + (marker.empty() ? "" : "&Marker=" + marker));
    lambda_api::check(r, "list functions");
    for (auto& f : r.doc.value("Functions", json::array())) {
      const auto vars = f.value("Environment", json::object()).value("Variables", json::object());
      if (!vars.contains("CPPLESS_FUNCTION_ID")) continue;  // not a cppless function
      if (!prefix.empty() && vars.value("CPPLESS_FUNCTION_PREFIX", "") != prefix) continue;
      out.push_back(f);
    }
    marker = r.doc.value("NextMarker", "");
    if (marker.empty()) break;
    char* escaped = curl_easy_escape(nullptr, marker.c_str(), static_cast<int>(marker.size()));
    marker = escaped;
    curl_free(escaped);
  }
  return out;
}

template <class F>
void guarded(F&& f) {
  try {
    if (int code = f()) std::exit(code);
  } catch (const std::exception& e) {
    std::cerr << "cppless: " << e.what() << "\n";
    std::exit(1);
  }
}

}  // namespace

void add_aws_commands(CLI::App& app) {
  struct deploy_args {
    std::string exe, prefix, role, bucket, out;
    bool dry_run = false;
    unsigned wait_s = 300;
    std::string alias;
    package_options packaging;
  };
  auto args = std::make_shared<deploy_args>();
  auto* deploy_cmd = app.add_subcommand("deploy", "Create or update one AWS Lambda function per entry of an executable");
  deploy_cmd->add_option("executable", args->exe, "A program linked with cppless")->required();
  deploy_cmd->add_option("--prefix", args->prefix, "Function name prefix (default: the executable's name)");
  deploy_cmd->add_option("--role", args->role, "Execution role ARN for new functions (default: CPPLESS_LAMBDA_ROLE)");
  deploy_cmd->add_option("--s3-bucket", args->bucket,
                         "Upload the package to this S3 bucket (in the functions' region) and deploy from there; "
                         "needed above Lambda's 50 MB direct-upload limit (default: CPPLESS_DEPLOY_BUCKET)");
  deploy_cmd->add_flag("--dry-run", args->dry_run, "Package and print the function names, change nothing");
  auto add_packaging = [args](CLI::App* cmd) {
    cmd->add_option("--architecture", args->packaging.architecture,
                    "x86_64 or arm64: refuse an executable built for the other one (default: the executable's)")
        ->check(CLI::IsMember({"x86_64", "arm64"}));
    cmd->add_flag("--no-os-check", [args](std::int64_t) { args->packaging.os_check = false; },
                  "Skip the check against provided.al2023 (glibc 2.34): only for a Lambda server on this machine");
  };
  deploy_cmd->add_option("--publish", args->alias,
                         "Publish a version of each function and point this alias at it (callers: aws_options::qualifier)");
  deploy_cmd->add_option("--wait", args->wait_s,
                         "Seconds to wait for each function to become Active after a change (default 300)");
  add_packaging(deploy_cmd);
  deploy_cmd->callback([args] {
    guarded([&] {
      return deploy(args->exe, args->prefix, args->role, args->bucket, args->dry_run, args->packaging,
                    std::chrono::seconds(args->wait_s), args->alias);
    });
  });

  auto* package_cmd = app.add_subcommand("package", "Write the zip `cppless deploy` would upload (<executable>-<arch>.zip)");
  package_cmd->add_option("executable", args->exe, "A program linked with cppless (its function build)")->required();
  package_cmd->add_option("--out", args->out, "Folder to write the package into")->required();
  add_packaging(package_cmd);
  package_cmd->callback([args] {
    guarded([&] {
      const lambda_package package = build_package(args->exe, args->packaging);
      read_function_manifest(args->exe);  // a cppless program, as deploy would check
      fs::create_directories(args->out);
      const fs::path path = fs::path(args->out) / package_file_name(args->exe, package.architecture);
      std::ofstream(path, std::ios::binary | std::ios::trunc) << package.zip;
      if (!fs::exists(path) || fs::file_size(path) != package.zip.size())
        throw std::runtime_error("cannot write " + path.string());
      std::cout << path.string() << "\n";
      std::cerr << "cppless package: " << package.zip.size() / 1024 << " KiB, " << package.contents.size() << " files ("
                << package.architecture << ")\n";
      return 0;
    });
  });

  auto prefix = std::make_shared<std::string>();
  auto names = std::make_shared<std::vector<std::string>>();
  auto* functions = app.add_subcommand("functions", "List or remove deployed cppless functions");
  functions->require_subcommand(1);
  auto* list = functions->add_subcommand("list", "List cppless functions (optionally of one prefix)");
  list->add_option("--prefix", *prefix, "Only functions deployed with this prefix");
  list->callback([prefix] {
    guarded([&] {
      lambda_api api(aws::settings::resolve());
      for (auto& f : list_functions(api, *prefix))
        std::printf("%-64s %6u MB %4u s %-7s %s\n", f.value("FunctionName", "").c_str(), f.value("MemorySize", 0u),
                    f.value("Timeout", 0u), f.value("Architectures", json::array({"x86_64"}))[0].get<std::string>().c_str(),
                    f.value("LastModified", "").c_str());
      return 0;
    });
  });
  auto* remove = functions->add_subcommand("remove", "Delete cppless functions: by name, or all of a prefix");
  remove->add_option("--prefix", *prefix, "Delete every cppless function deployed with this prefix");
  remove->add_option("names", *names, "Function names");
  remove->callback([prefix, names] {
    guarded([&] {
      lambda_api api(aws::settings::resolve());
      std::vector<std::string> targets = *names;
      if (!prefix->empty())
        for (auto& f : list_functions(api, *prefix)) targets.push_back(f.value("FunctionName", ""));
      if (targets.empty()) throw std::runtime_error("nothing to remove: give names or --prefix");
      for (auto& n : targets) {
        auto r = api.call("DELETE", "/2015-03-31/functions/" + n);
        lambda_api::check(r, "delete " + n);
        std::cout << "removed   " << n << "\n";
      }
      return 0;
    });
  });
}

}  // namespace cppless::tools
