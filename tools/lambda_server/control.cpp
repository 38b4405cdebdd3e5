// The control-plane calls a deployment makes (Lambda API 2015-03-31): CreateFunction,
// GetFunction, GetFunctionConfiguration, UpdateFunctionCode, UpdateFunctionConfiguration,
// DeleteFunction, ListFunctions. Code comes as a base64 zip (Code.ZipFile) and is unpacked
// with its file modes into the work directory; its `bootstrap` is what environments run.
#include "lambda.hpp"

#include <cppless/base64.hpp>
#include "sigv4.hpp"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <zip.h>

#include <sys/stat.h>

#include <ctime>
#include <filesystem>
#include <fstream>

namespace lambda_server {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

http_response json_response(int status, const std::string& body) {
  return {status, {{"Content-Type", "application/json"}}, body};
}

http_response error(int status, const std::string& type, const std::string& message) {
  return {status,
          {{"Content-Type", "application/json"}, {"x-amzn-ErrorType", type}},
          json{{"Type", "User"}, {"message", message}}.dump()};
}

std::string now_iso() {
  char buf[40];
  std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000+0000", std::gmtime(&t));
  return buf;
}

bool decode_base64(const std::string& in, std::string& out) {
  try {
    const cppless::byte_buffer bytes = cppless::base64_decode(in);
    out.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return true;
  } catch (const cppless::error&) {
    return false;
  }
}

bool unzip(const std::string& bytes, const fs::path& dir, std::string& err) {
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &ze);
  zip_t* z = src ? zip_open_from_source(src, ZIP_RDONLY, &ze) : nullptr;
  if (!z) {
    err = std::string("Could not unzip uploaded file: ") + zip_error_strerror(&ze);
    if (src) zip_source_free(src);
    zip_error_fini(&ze);
    return false;
  }
  const auto count = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* name = zip_get_name(z, static_cast<zip_uint64_t>(i), 0);
    if (!name) continue;
    const fs::path rel(name);
    if (rel.is_absolute() || rel.lexically_normal().string().rfind("..", 0) == 0) {
      err = std::string("zip entry escapes the task root: ") + name;
      zip_close(z);
      return false;
    }
    const fs::path target = dir / rel;
    if (!rel.empty() && std::string(name).back() == '/') {
      fs::create_directories(target);
      continue;
    }
    fs::create_directories(target.parent_path());
    zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(i), 0);
    if (!f) continue;
    std::ofstream out(target, std::ios::binary);
    char buf[65536];
    for (zip_int64_t n; (n = zip_fread(f, buf, sizeof buf)) > 0;) out.write(buf, n);
    zip_fclose(f);
    out.close();
    zip_uint8_t opsys;
    zip_uint32_t attr;
    if (zip_file_get_external_attributes(z, static_cast<zip_uint64_t>(i), 0, &opsys, &attr) == 0 &&
        opsys == ZIP_OPSYS_UNIX && (attr >> 16) != 0)
      ::chmod(target.c_str(), (attr >> 16) & 07777);
  }
  zip_close(z);
  return true;
}

void apply_config(function& fn, const json& doc) {
  if (doc.contains("Runtime")) fn.runtime = doc["Runtime"].get<std::string>();
  if (doc.contains("Role")) fn.role = doc["Role"].get<std::string>();
  if (doc.contains("Handler")) fn.handler = doc["Handler"].get<std::string>();
  if (doc.contains("Description")) fn.description = doc["Description"].get<std::string>();
  if (doc.contains("MemorySize")) fn.memory = doc["MemorySize"].get<unsigned>();
  if (doc.contains("Timeout")) fn.timeout = doc["Timeout"].get<unsigned>();
  if (doc.contains("EphemeralStorage")) fn.storage = doc["EphemeralStorage"].value("Size", 512u);
  if (doc.contains("Architectures") && !doc["Architectures"].empty()) fn.arch = doc["Architectures"][0].get<std::string>();
  if (doc.contains("Environment")) {
    fn.env.clear();
    const json vars = doc["Environment"].value("Variables", json::object());  // a named copy: items() refers to it
    for (auto& [k, v] : vars.items()) fn.env[k] = v.get<std::string>();
  }
}

std::string validate(const function& fn) {
  if (fn.memory < 128 || fn.memory > 10240) return "MemorySize must be between 128 and 10240";
  if (fn.timeout < 1 || fn.timeout > 900) return "Timeout must be between 1 and 900";
  if (fn.storage < 512 || fn.storage > 10240) return "EphemeralStorage.Size must be between 512 and 10240";
  if (fn.arch != "x86_64" && fn.arch != "arm64") return "Architectures must be x86_64 or arm64";
  return {};
}

}  // namespace

bool lambda_service::install_code(function& fn, const std::string& zip_base64, std::string& err) {
  std::string zip;
  if (!decode_base64(zip_base64, zip)) {
    err = "Code.ZipFile is not valid base64";
    return false;
  }
  const fs::path dir = fs::path(options_.work_dir) / (fn.name + "-" + std::to_string(fn.generation + 1));
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  if (!unzip(zip, dir, err)) return false;
  if (!fs::exists(dir / "bootstrap")) {
    err = "the zip has no bootstrap at its root (provided runtimes start ./bootstrap)";
    return false;
  }
  fn.task_root = dir.string();
  fn.executable = (dir / "bootstrap").string();
  fn.code_size = zip.size();
  fn.code_sha256 = sha256_base64(zip);
  return true;
}

std::string lambda_service::configuration_json(const function& fn) const {
  json vars = json::object();
  for (auto& [k, v] : fn.env) vars[k] = v;
  return json{{"FunctionName", fn.name},
              {"FunctionArn", arn(fn.name)},
              {"Runtime", fn.runtime},
              {"Role", fn.role},
              {"Handler", fn.handler},
              {"CodeSize", fn.code_size},
              {"Description", fn.description},
              {"Timeout", fn.timeout},
              {"MemorySize", fn.memory},
              {"LastModified", fn.last_modified},
              {"CodeSha256", fn.code_sha256},
              {"Version", "$LATEST"},
              {"Environment", {{"Variables", vars}}},
              {"EphemeralStorage", {{"Size", fn.storage}}},
              {"Architectures", json::array({fn.arch})},
              {"State", "Active"},
              {"LastUpdateStatus", "Successful"},
              {"PackageType", "Zip"},
              {"RevisionId", fn.revision}}
      .dump();
}

void lambda_service::control(http_request&& req, reply_to reply) {
  static const std::string base = "/2015-03-31/functions";
  if (req.path.rfind(base, 0) != 0) return reply.send(error(404, "UnknownOperationException", "Unknown operation"));
  std::string rest = req.path.substr(base.size());
  if (!rest.empty() && rest[0] == '/') rest.erase(0, 1);
  const auto slash = rest.find('/');
  const std::string name = rest.substr(0, slash);
  const std::string sub = slash == std::string::npos ? "" : rest.substr(slash + 1);

  if (name.empty() && req.method == "GET") {  // ListFunctions
    json list = json::array();
    for (auto& [n, fn] : functions_) list.push_back(json::parse(configuration_json(*fn)));
    return reply.send(json_response(200, json{{"Functions", list}}.dump()));
  }
  if (name.empty() && req.method == "POST") {  // CreateFunction
    auto doc = json::parse(req.body, nullptr, false);
    if (!doc.is_object() || !doc.contains("FunctionName"))
      return reply.send(error(400, "InvalidParameterValueException", "FunctionName is required"));
    function fn;
    fn.name = doc["FunctionName"].get<std::string>();
    if (functions_.count(fn.name))
      return reply.send(error(409, "ResourceConflictException", "Function already exist: " + fn.name));
    try {
      apply_config(fn, doc);
    } catch (const std::exception& e) {
      return reply.send(error(400, "InvalidParameterValueException", e.what()));
    }
    if (auto problem = validate(fn); !problem.empty())
      return reply.send(error(400, "InvalidParameterValueException", problem));
    std::string err;
    const std::string zip = doc.contains("Code") ? doc["Code"].value("ZipFile", "") : "";
    if (zip.empty()) return reply.send(error(400, "InvalidParameterValueException", "Code.ZipFile is required"));
    if (!install_code(fn, zip, err)) return reply.send(error(400, "InvalidParameterValueException", err));
    fn.generation = 1;
    fn.last_modified = now_iso();
    add_function(std::move(fn));
    return reply.send(json_response(201, configuration_json(*functions_[doc["FunctionName"].get<std::string>()])));
  }
  auto it = functions_.find(name);
  if (it == functions_.end())
    return reply.send(error(404, "ResourceNotFoundException", "Function not found: " + arn(name)));
  function& fn = *it->second;
  if (req.method == "GET" && sub.empty())
    return reply.send(json_response(
        200, json{{"Configuration", json::parse(configuration_json(fn))},
                  {"Code", {{"RepositoryType", "S3"}, {"Location", "file://" + fn.task_root}}}}
                 .dump()));
  if (req.method == "GET" && sub == "configuration") return reply.send(json_response(200, configuration_json(fn)));
  if (req.method == "PUT" && (sub == "code" || sub == "configuration")) {
    auto doc = json::parse(req.body, nullptr, false);
    if (!doc.is_object()) return reply.send(error(400, "InvalidParameterValueException", "body is not JSON"));
    if (sub == "code") {
      std::string err;
      if (!install_code(fn, doc.value("ZipFile", ""), err))
        return reply.send(error(400, "InvalidParameterValueException", err));
    } else {
      function copy = fn;  // validate before applying
      try {
        apply_config(copy, doc);
      } catch (const std::exception& e) {
        return reply.send(error(400, "InvalidParameterValueException", e.what()));
      }
      if (auto problem = validate(copy); !problem.empty())
        return reply.send(error(400, "InvalidParameterValueException", problem));
      apply_config(fn, doc);
    }
    ++fn.generation;  // running environments finish their call, then retire
    fn.last_modified = now_iso();
    fn.revision = std::to_string(fn.generation) + "-" + fn.code_sha256.substr(0, 8);
    dispatch(fn);
    return reply.send(json_response(200, configuration_json(fn)));
  }
  if (req.method == "DELETE" && sub.empty()) {
    auto owned = std::move(it->second);
    functions_.erase(it);
    for (auto& inv : owned->queue)
      fail_invocation(*inv, "ResourceNotFoundException", "Function deleted while the call was queued");
    owned->queue.clear();
    ++owned->generation;
    for (auto& env : owned->envs) retire(*env);
    deleted_.push_back(std::move(owned));  // environments still point at it until they exit
    return reply.send({204, {}, ""});
  }
  reply.send(error(400, "UnknownOperationException", "Unsupported operation " + req.method + " " + req.path));
}

}  // namespace lambda_server
