// cppless/archive/types/polymorphic.hpp — derived classes that travel behind a pointer to their
// base (std::unique_ptr<Base>, std::shared_ptr<Base>), registered once as with cereal:
//
//   struct shape { virtual ~shape() = default; template <class A> void serialize(A&) {} };
//   struct circle : shape { double r = 0; template <class A> void serialize(A& ar) { ar(r); } };
//   CPPLESS_REGISTER_TYPE(circle)          // at namespace scope, in any one source file
//
// A registered class needs a default constructor and its own serialize/save/load (which writes
// its base's part too, e.g. through cereal::base_class, if the base has one). On the wire it is
// named by a 64-bit hash of its mangled name (the same in every build of the sources, as the
// host and its workers are); an unknown id or a class that does not derive from the pointer's
// base is a decode_error. Saving a pointer to an unregistered derived class throws
// cppless::error naming the class. Needs RTTI (as does cppless' dispatch).
// Part of <cppless/archive.hpp> (include that, not this part).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <unordered_map>

#include "cppless/archive/core.hpp"
#include "cppless/error.hpp"
#include "cppless/identity.hpp"

namespace cppless::detail {

// One address per type, for identity keys that need no RTTI.
template <class T>
inline constexpr char type_tag = 0;

template <class T>
void throw_as_pointer(void* object) {
  throw static_cast<T*>(object);
}

// What the archive needs to handle a registered class D when only a pointer to its base is known.
struct polymorphic_type {
  std::string mangled_name;
  std::uint64_t id = 0;
  const void* tag = nullptr;                          // &type_tag<D>
  void (*save)(output_archive&, const void*) = nullptr;
  void (*load)(input_archive&, void*) = nullptr;
  std::shared_ptr<void> (*make_shared)() = nullptr;   // a default-constructed D
  void* (*make_new)() = nullptr;                      // new D
  void (*destroy)(void*) = nullptr;                   // delete (D*)
  void (*throw_pointer)(void*) = nullptr;             // throw (D*)
};

// Filled at static initialisation (the macro), read afterwards; never changed while calls run.
class polymorphic_registry {
 public:
  static polymorphic_registry& global() {
    static polymorphic_registry registry;
    return registry;
  }

  template <class D>
  bool add() {
    static_assert(std::is_polymorphic_v<D> && !std::is_abstract_v<D>,
                  "CPPLESS_REGISTER_TYPE: the class must be polymorphic (derive from a class with a virtual "
                  "function) and not abstract");
    static_assert(std::is_default_constructible_v<D>, "CPPLESS_REGISTER_TYPE: the class needs a default constructor");
    static_assert(codec<D>::saveable && codec<D>::loadable,
                  "CPPLESS_REGISTER_TYPE: the class needs its own serialize(Archive&) (or save/load), which "
                  "writes its base's part too");
    polymorphic_type t;
    t.mangled_name = typeid(D).name();
    t.id = hash64(t.mangled_name);
    if (t.id == 0) t.id = 1;  // 0 says "the pointer's own class"
    t.tag = &type_tag<D>;
    t.save = [](output_archive& ar, const void* p) { codec<D>::save(ar, *static_cast<const D*>(p)); };
    t.load = [](input_archive& ar, void* p) { codec<D>::load(ar, *static_cast<D*>(p)); };
    t.make_shared = []() -> std::shared_ptr<void> { return std::make_shared<D>(); };
    t.make_new = []() -> void* { return new D(); };
    t.destroy = [](void* p) { delete static_cast<D*>(p); };
    t.throw_pointer = &throw_as_pointer<D>;
    if (auto it = by_id_.find(t.id); it != by_id_.end() && it->second->mangled_name != t.mangled_name)
      throw error("cppless: CPPLESS_REGISTER_TYPE: " + demangle(t.mangled_name.c_str()) + " and " +
                  demangle(it->second->mangled_name.c_str()) + " have the same 64-bit type id; rename one");
    auto [placed, fresh] = by_type_.try_emplace(std::type_index(typeid(D)), std::move(t));
    if (fresh) by_id_[placed->second.id] = &placed->second;
    return true;
  }

  [[nodiscard]] const polymorphic_type* find(const std::type_info& type) const {
    auto it = by_type_.find(std::type_index(type));
    return it == by_type_.end() ? nullptr : &it->second;
  }
  [[nodiscard]] const polymorphic_type* find(std::uint64_t id) const {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<std::type_index, polymorphic_type> by_type_;  // nodes: pointers stay valid
  std::unordered_map<std::uint64_t, const polymorphic_type*> by_id_;
};

// The object at `object` (of the type `throw_pointer` throws) as a Base*, or null when it is not
// one. Throwing the pointer and catching it as Base* is the one portable conversion from a type
// known only at run time to a base known only at compile time (it follows multiple and virtual
// inheritance, and refuses private or ambiguous bases).
template <class Base>
Base* upcast(void* object, void (*throw_pointer)(void*)) {
  try {
    throw_pointer(object);
  } catch (Base* base) {
    return base;
  } catch (...) {
  }
  return nullptr;
}

[[noreturn, gnu::cold]] inline void throw_unregistered(const std::type_info& dynamic, const char* pointer_kind,
                                                       const std::type_info& base) {
  throw error(std::string("cppless: cannot serialize a ") + pointer_kind + "<" + demangle(base.name()) + "> holding a " +
              demangle(dynamic.name()) + ": register the derived class once with CPPLESS_REGISTER_TYPE(" +
              demangle(dynamic.name()) + ") (only the base part would travel otherwise)");
}

}  // namespace cppless::detail

#define CPPLESS_DETAIL_CONCAT2(a, b) a##b
#define CPPLESS_DETAIL_CONCAT(a, b) CPPLESS_DETAIL_CONCAT2(a, b)

// Registers a class derived from a polymorphic base so that it can travel behind a pointer to
// that base. Use at namespace scope; registering the same class in several files is harmless.
#define CPPLESS_REGISTER_TYPE(...)                                                          \
  [[maybe_unused]] static const bool CPPLESS_DETAIL_CONCAT(cppless_registered_type_, __COUNTER__) = \
      ::cppless::detail::polymorphic_registry::global().add<__VA_ARGS__>()
