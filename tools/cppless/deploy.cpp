// Deployment to AWS Lambda: package, then create or update one function per entry.
//
// Package: a zip with bin/<executable>, the shared libraries it needs under lib/ (all but the C
// library family, which provided.al2023 has), and a `bootstrap` script that starts the
// executable with lib/ on the library path. Entries are written in a fixed order with fixed
// times, so an unchanged build gives the same zip and the same CodeSha256: such functions are
// skipped. Each function gets the entry's memory, timeout (0: Lambda's 900 s maximum) and
// ephemeral storage, the executable's architecture, and CPPLESS_FUNCTION_ID /
// CPPLESS_FUNCTION_PREFIX in its environment (the runtime refuses at init to serve an entry its
// build lacks, and nested dispatch names functions like the host).
#include "deploy.hpp"

#include "manifest.hpp"
#include "s3_upload.hpp"
#include "signed_request.hpp"

#include <cppless/aws/naming.hpp>
#include <cppless/aws/settings.hpp>

#include <curl/curl.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <zip.h>

#include <elf.h>
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

std::string b64(const std::string& in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<std::size_t>(n));
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

// ---- packaging -------------------------------------------------------------------------------

std::string elf_architecture(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr h{};
  in.read(reinterpret_cast<char*>(&h), sizeof h);
  if (!in || std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0) throw std::runtime_error(path + " is not an ELF file");
  if (h.e_machine == EM_X86_64) return "x86_64";
  if (h.e_machine == EM_AARCH64) return "arm64";
  throw std::runtime_error(path + ": Lambda runs x86_64 and arm64 executables only");
}

// Libraries provided.al2023 has (the C library family); everything else travels in the zip.
bool provided_by_lambda(const std::string& name) {
  static const char* system[] = {"linux-vdso", "linux-gate", "ld-linux", "libc.so", "libm.so", "libpthread.so",
                                 "libdl.so", "librt.so", "libresolv.so", "libutil.so"};
  for (const char* s : system)
    if (name.rfind(s, 0) == 0) return true;
  return false;
}

std::vector<std::pair<std::string, std::string>> shared_libraries(const std::string& exe) {
  std::vector<std::pair<std::string, std::string>> out;
  FILE* p = ::popen(("ldd '" + exe + "' 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    std::string l(line);
    const auto arrow = l.find(" => ");
    if (arrow == std::string::npos) continue;
    std::string name = l.substr(0, arrow);
    name.erase(0, name.find_first_not_of(" \t"));
    std::string path = l.substr(arrow + 4);
    path = path.substr(0, path.find(" ("));
    if (path.empty() || path[0] != '/' || provided_by_lambda(name)) continue;
    out.emplace_back(name, fs::canonical(path).string());
  }
  ::pclose(p);
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A reproducible zip: fixed order, fixed times, explicit modes.
std::string make_zip(const std::string& exe, std::vector<std::string>& contents) {
  const std::string tmp = fs::temp_directory_path() / ("cppless-deploy-" + std::to_string(::getpid()) + ".zip");
  int err = 0;
  zip_t* z = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!z) throw std::runtime_error("cannot create " + tmp);
  std::vector<std::string> keep;  // zip_source_buffer does not copy
  keep.reserve(64);
  auto add = [&](const std::string& name, std::string data, unsigned mode) {
    keep.push_back(std::move(data));
    zip_source_t* src = zip_source_buffer(z, keep.back().data(), keep.back().size(), 0);
    const auto index = zip_file_add(z, name.c_str(), src, ZIP_FL_OVERWRITE);
    zip_file_set_mtime(z, static_cast<zip_uint64_t>(index), 315532800, 0);  // 1980-01-01
    zip_file_set_external_attributes(z, static_cast<zip_uint64_t>(index), 0, ZIP_OPSYS_UNIX, (0100000u | mode) << 16);
    contents.push_back(name);
  };
  const std::string base = fs::path(exe).filename();
  add("bootstrap",
      "#!/bin/sh\n# cppless: start the function's executable with its libraries\n"
      "export LD_LIBRARY_PATH=\"$LAMBDA_TASK_ROOT/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"\n"
      "exec \"$LAMBDA_TASK_ROOT/bin/" + base + "\" \"$@\"\n",
      0755);
  add("bin/" + base, read_file(exe), 0755);
  for (auto& [name, path] : shared_libraries(exe)) add("lib/" + name, read_file(path), 0644);
  if (zip_close(z) != 0) throw std::runtime_error("cannot write " + tmp);
  std::string bytes = read_file(tmp);
  fs::remove(tmp);
  return bytes;
}

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

// Lambda's limit for a zip sent in the request itself; above it the package goes through S3.
constexpr std::size_t direct_upload_limit = 50u * 1024 * 1024;

int deploy(const std::string& exe, std::string prefix, std::string role, std::string bucket, bool dry_run) {
  const json manifest = read_manifest(exe);
  if (prefix.empty()) prefix = fs::path(exe).filename().string();
  const std::string arch_of_build = elf_architecture(exe);
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
                               " is built for " + arch_of_build + "; build it for that architecture (toolchain file)");
    functions.push_back(w);
  }
  std::vector<std::string> contents;
  const std::string zip = make_zip(exe, contents);
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
      std::cout << "created   " << w.name << "\n";
      ++created;
      continue;
    }
    lambda_api::check(current, "get " + w.name);
    const bool same_code = current.doc.value("CodeSha256", "") == sha &&
                           current.doc.value("Architectures", json::array({"x86_64"}))[0] == w.arch;
    const bool same_config = config_matches(current.doc, w);
    if (same_code && same_config) {
      std::cout << "unchanged " << w.name << "\n";
      ++unchanged;
      continue;
    }
    if (!same_code) {
      json update = code_spec();
      update["Architectures"] = json::array({w.arch});
      api.call_settled("PUT", path + "/code", update.dump(), "update code of " + w.name, w.name);
    }
    if (!same_config) {
      config.erase("Role");  // keep the role a function has
      api.call_settled("PUT", path + "/configuration", config.dump(), "update configuration of " + w.name);
    }
    std::cout << "updated   " << w.name << "\n";
    ++updated;
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
    std::string exe, prefix, role, bucket;
    bool dry_run = false;
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
  deploy_cmd->callback([args] {
    guarded([&] { return deploy(args->exe, args->prefix, args->role, args->bucket, args->dry_run); });
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
