// User-defined operations: one Redis Functions library per type, loaded on every master; calls
// through FCALL with the same call records as the built-in scripts.
#include <cppless/shared/custom.hpp>
#include <cppless/shared/store.hpp>

#include "connection.hpp"
#include "scripts.hpp"

#include <map>
#include <mutex>

namespace cppless::shared {
namespace detail {
namespace {

void check_identifier(const std::string& name, const std::string& what) {
  bool ok = !name.empty() && name.size() <= 64;
  for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
  if (!ok) throw invalid_argument("cppless::shared: bad " + what + " '" + name.substr(0, 64) + "': use 1 to 64 letters, digits or '_'");
}

std::string function_name(const std::string& type, std::string_view op) { return "cppless_" + type + "__" + std::string(op); }

struct type_registry {
  std::mutex m;
  std::map<std::string, std::string> libraries;  // type -> library code
};
type_registry& types() {
  static auto* r = new type_registry;  // leaked: handles may be used from static destructors
  return *r;
}

void load_library(session& ses, const std::string& type, const std::string& code) {
  const std::string_view argv[] = {"FUNCTION", "LOAD", "REPLACE", code};
  reply r = ses.raw(argv);
  if (r.type == reply::kind::error)
    throw operation_error("cppless::shared: the operations of type '" + type + "' did not load into Redis at " +
                          ses.where().to_string() + ": " + r.str);
}

}  // namespace

std::string library_of(const object_type& type) {
  check_identifier(type.name, "object type name");
  if (type.operations.empty()) throw invalid_argument("cppless::shared: object type '" + type.name + "' has no operations");
  std::string code = "#!lua name=cppless_" + type.name + "\n";
  for (const operation& op : type.operations) {
    check_identifier(op.name, "operation name");
    code += "redis.register_function('" + function_name(type.name, op.name) + "', function(KEYS, ARGV)\n";
    code += wrap_user_operation(op.body, op.changes);
    code += "end)\n";
  }
  return code;
}

void remember_type(const object_type& type) {
  std::string code = library_of(type);
  std::lock_guard lock(types().m);
  types().libraries[type.name] = std::move(code);
}

reply call_operation(const object_ref& obj, const std::string& type, std::string_view op, std::vector<std::string> args) {
  const kind_info kind = custom_object::kind_of(type);
  const std::string fn = function_name(type, op);
  const std::string key = obj.key();
  session ses(obj);
  // Whether it changes state is the definition's; the call record costs nothing to a read, so
  // every call carries one (the wrapper of a read ignores it).
  const std::string seq = std::to_string(++ses.next_sequence());
  const std::string cid = ses.client_id();
  std::vector<std::string_view> argv{"1", key, kind.kind, cid, seq};
  for (const auto& a : args) argv.emplace_back(a);
  reply r = ses.fcall(fn, argv, true);
  if (r.type == reply::kind::error && r.str.find("Function not found") != std::string::npos) {
    // The server lost the library (restart without persistence, a new master): load it again if
    // this process defined the type, and call once more (the same call id).
    std::string code;
    {
      std::lock_guard lock(types().m);
      if (auto it = types().libraries.find(type); it != types().libraries.end()) code = it->second;
    }
    if (code.empty())
      throw operation_error("cppless::shared: " + obj.describe() + ": operation '" + std::string(op) + "' of type '" + type +
                            "' is not defined on the server (store::define it first)");
    load_library(ses, type, code);
    r = ses.fcall(fn, argv, true);
    if (r.type == reply::kind::error && r.str.find("Function not found") != std::string::npos)
      throw operation_error("cppless::shared: " + obj.describe() + ": type '" + type + "' has no operation '" + std::string(op) + "'");
  }
  if (r.type == reply::kind::error) raise(r, ses.where(), &obj, &kind);
  return r;
}

}  // namespace detail

void store::define(const object_type& type) const {
  const std::string code = detail::library_of(type);
  for (const address& node : detail::session::nodes_of(addr_)) {
    detail::session ses(node, detail::session::pinned_t{});
    detail::load_library(ses, type.name, code);
  }
  detail::remember_type(type);
}

shared::custom_object store::custom(std::string_view type, std::string_view name) const {
  detail::check_identifier(std::string(type), "object type name");
  shared::custom_object o(ref(name), std::string(type));
  const detail::kind_info kind = shared::custom_object::kind_of(o.type());
  detail::open_object(o.ref(), kind, {});
  return o;
}

}  // namespace cppless::shared
