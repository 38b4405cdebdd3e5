// The entry registry, function identity helpers and the manifest.
#include <cppless/capture.hpp>
#include <cppless/config.hpp>
#include <cppless/entry.hpp>
#include <cppless/identity.hpp>

#include "json_text.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

namespace cppless {

std::string config_values::describe() const {
  static constexpr const char* arch_names[] = {"native", "x86_64", "arm64"};
  std::ostringstream out;
  out << "memory=" << memory_mb << ",timeout=" << timeout_s << ",storage=" << ephemeral_storage_mb
      << ",arch=" << arch_names[static_cast<int>(arch)];
  return out.str();
}

std::string readable_type_name(std::string_view pretty) {
  // Clang: "... [T = X]"; GCC: "... [with T = X; std::string_view = ...]".
  std::string_view name = pretty;
  if (auto at = pretty.find("T = "); at != std::string_view::npos) {
    name = pretty.substr(at + 4);
    auto end = name.find_first_of(";]");
    // The type itself may contain ']' or ';' only inside brackets; take the last ']' for Clang.
    if (name.find(';') == std::string_view::npos) end = name.rfind(']');
    name = name.substr(0, end);
  }
  // "(lambda at /abs/dir/file.cpp:3:9)" -> "(lambda at file.cpp:3:9)": absolute directories
  // differ between builds; paths relative to the source root (-ffile-prefix-map) are kept.
  std::string out;
  out.reserve(name.size());
  for (std::size_t i = 0; i < name.size();) {
    static constexpr std::string_view marker = " at /";
    if (name.substr(i, marker.size()) == marker) {
      std::size_t path_begin = i + 4;
      std::size_t path_end = name.find(':', path_begin);
      if (path_end == std::string_view::npos) path_end = name.size();
      std::string_view path = name.substr(path_begin, path_end - path_begin);
      out += " at ";
      out += path.substr(path.rfind('/') + 1);
      i = path_end;
    } else {
      out += name[i++];
    }
  }
  return out;
}

std::string demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && text ? std::string(text.get()) : std::string(mangled);
}

namespace detail {

std::string describe_signature(std::initializer_list<const char*> mangled_types) {
  std::string out = "(";
  bool first = true;
  for (const char* t : mangled_types) {
    if (!first) out += ",";
    out += t;
    first = false;
  }
  return out + ")";
}

void throw_bad_capture(const char* type, const char* name, int position, const char* why) {
  const std::string which = *name ? "capture '" + std::string(name) + "'" : "capture #" + std::to_string(position);
  throw capture_error("cppless: " + which + " of type '" + type + "' " + why +
                      ": it would not be valid in another process, so nothing was sent. Capture the value "
                      "itself by copy ([=] or [x]), or pass it as an argument.");
}

}  // namespace detail

registry& registry::global() {
  static registry instance;
  return instance;
}

const entry& registry::add(entry e) {
  for (const auto& existing : entries_) {
    if (existing->id_hash != e.id_hash) continue;
    if (existing->id == e.id) return *existing;
    std::fprintf(stderr, "cppless: two functions share an id hash (%s / %s); rename one of them\n",
                 existing->id.c_str(), e.id.c_str());
    std::abort();
  }
  entries_.push_back(std::make_unique<entry>(std::move(e)));
  return *entries_.back();
}

const entry* registry::find(std::uint64_t id_hash) const {
  for (const auto& e : entries_)
    if (e->id_hash == id_hash) return e.get();
  return nullptr;
}

std::vector<const entry*> registry::entries() const {
  std::vector<const entry*> out;
  for (const auto& e : entries_) out.push_back(e.get());
  std::sort(out.begin(), out.end(), [](const entry* a, const entry* b) { return a->id < b->id; });
  return out;
}

namespace {
std::string json_string(std::string_view text) {
  std::string out;
  detail::append_json_string(out, text);
  return out;
}

}  // namespace

std::string registry::manifest_json() const {
  static constexpr const char* arch_names[] = {"native", "x86_64", "arm64"};
  std::string out = "{\"entry_points\":[";
  bool first = true;
  for (const entry* e : entries()) {
    if (!first) out += ",";
    first = false;
    out += "{\"id\":" + json_string(e->id) + ",\"function_name\":" + json_string(e->name) +
           ",\"hash\":\"" + hex64(e->id_hash) + "\",\"fingerprint\":\"" + hex64(e->fingerprint) +
           "\",\"config\":{\"memory\":" + std::to_string(e->config.memory_mb) +
           ",\"timeout\":" + std::to_string(e->config.timeout_s) +
           ",\"ephemeral_storage\":" + std::to_string(e->config.ephemeral_storage_mb) +
           ",\"architecture\":\"" + arch_names[static_cast<int>(e->config.arch)] + "\"}}";
  }
  return out + "]}";
}

}  // namespace cppless
