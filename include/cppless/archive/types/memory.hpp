// cppless/archive/types/memory.hpp — codecs for std::unique_ptr and std::shared_ptr.
// Part of <cppless/archive.hpp> (include that, not this part); byte layouts are listed in archive/core.hpp.
//
// A pointer travels as a flag and the object. Pointers to a polymorphic class carry the id of
// the object's class: its own, or a derived class registered with CPPLESS_REGISTER_TYPE
// (types/polymorphic.hpp); an unregistered derived class is refused at encode time, never sliced.
// shared_ptr keeps identity within one payload (one archive: a call's captures and arguments
// together): the second pointer to an object is written as the index of the first, and arrives
// as the same object. A cycle of shared_ptrs is refused at encode time (cppless::error); a
// payload whose index refers to an object that is still being read, or to one of another type,
// is a decode_error. Without RTTI, polymorphic pointers are not supported (a derived object
// would be sliced).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>

#include "cppless/archive/types/polymorphic.hpp"
#include "cppless/archive/types/support.hpp"

namespace cppless::detail {

#if defined(__cpp_rtti) || defined(__GXX_RTTI)
inline constexpr bool has_rtti = true;
#else
inline constexpr bool has_rtti = false;
#endif

// Pointers to such a class carry a type id (0: the class itself).
template <class T>
inline constexpr bool is_open_polymorphic_v = has_rtti && std::is_polymorphic_v<T> && !std::is_final_v<T>;

// The class itself, loaded when the type id is 0.
template <class T>
inline constexpr bool loads_itself_v = codec<T>::loadable && std::is_default_constructible_v<T> && !std::is_abstract_v<T>;

// What to write for the object behind a non-null pointer: its registered class (null for T itself)
// and its most-derived address.
template <class T>
struct dynamic_object {
  const polymorphic_type* type = nullptr;
  const void* address = nullptr;
};

template <class T>
dynamic_object<T> describe_object(const T& object, const char* pointer_kind) {
  dynamic_object<T> d{nullptr, static_cast<const void*>(&object)};
  if constexpr (is_open_polymorphic_v<T>) {
    const std::type_info& dynamic = typeid(object);
    if (dynamic != typeid(T)) {
      d.type = polymorphic_registry::global().find(dynamic);
      if (d.type == nullptr) throw_unregistered(dynamic, pointer_kind, typeid(T));
      d.address = dynamic_cast<const void*>(&object);
    }
  }
  if constexpr (!codec<T>::saveable) {
    if (d.type == nullptr)
      throw error(std::string("cppless: cannot serialize a ") + pointer_kind + " to " + demangle(typeid(T).name()) +
                  " itself: the class has no serialize/save (only registered derived classes can travel)");
  }
  return d;
}

template <class T>
void write_type_id(output_archive& ar, const dynamic_object<T>& d) {
  if constexpr (is_open_polymorphic_v<T>) {
    const std::uint64_t id = d.type ? d.type->id : 0;
    std::memcpy(ar.grow(8), &id, 8);
  }
}

template <class T>
void write_object(output_archive& ar, const T& object, const dynamic_object<T>& d) {
  if (d.type) d.type->save(ar, d.address);
  else if constexpr (codec<T>::saveable) codec<T>::save(ar, object);
}

// Reads the type id of a pointer to T: null for T itself, else the registered class (checked).
template <class T>
const polymorphic_type* read_type_id(input_archive& ar, const char* what) {
  if constexpr (!is_open_polymorphic_v<T>) {
    return nullptr;
  } else {
    std::uint64_t id;
    std::memcpy(&id, ar.take(8, what), 8);
    const std::size_t at = ar.position() - 8;
    if (id == 0) {
      if constexpr (!loads_itself_v<T>) throw_corrupt(what, "names its abstract (or not loadable) base class itself", at);
      return nullptr;
    }
    const polymorphic_type* type = polymorphic_registry::global().find(id);
    if (type == nullptr) throw_corrupt(what, "type id " + std::to_string(id) + " is not a registered class", at);
    return type;
  }
}

[[noreturn, gnu::cold]] inline void throw_not_derived(const char* what, const polymorphic_type& type,
                                                      const std::type_info& base, std::size_t at) {
  throw_corrupt(what, "holds a " + demangle(type.mangled_name.c_str()) + ", which is not a " + demangle(base.name()), at);
}

template <class T>
struct codec<std::unique_ptr<T>> {
  static constexpr bool saveable = (codec<T>::saveable && !std::is_abstract_v<T>) || is_open_polymorphic_v<T>;
  static constexpr bool loadable = loads_itself_v<T> || (is_open_polymorphic_v<T> && std::has_virtual_destructor_v<T>);
  static constexpr std::size_t min_size = 1;
  static void save(output_archive& ar, const std::unique_ptr<T>& p) {
    if (!p) {
      *ar.grow(1) = std::byte{0};
      return;
    }
    const auto d = describe_object(*p, "std::unique_ptr");
    *ar.grow(1) = std::byte{1};
    write_type_id(ar, d);
    write_object(ar, *p, d);
  }
  static void load(input_archive& ar, std::unique_ptr<T>& p) {
    if (!read_flag(ar, "std::unique_ptr")) {
      p.reset();
      return;
    }
    const std::size_t at = ar.position();
    const polymorphic_type* type = read_type_id<T>(ar, "std::unique_ptr type id");
    if (type == nullptr) {
      if constexpr (loads_itself_v<T>) {
        auto fresh = std::make_unique<T>();
        load_value(ar, *fresh);
        p = std::move(fresh);
      }
      return;
    }
    if constexpr (is_open_polymorphic_v<T>) {
      void* object = type->make_new();
      T* base = upcast<T>(object, type->throw_pointer);
      if (base == nullptr) {
        type->destroy(object);
        throw_not_derived("std::unique_ptr", *type, typeid(T), at);
      }
      try {
        type->load(ar, object);
      } catch (...) {
        type->destroy(object);
        throw;
      }
      p.reset(base);  // deleted through T's virtual destructor
    }
  }
};
template <class T>
struct codec<std::unique_ptr<T[]>> : codec<void> {};  // the length is unknown

template <class T>
struct codec<std::shared_ptr<T>> {
  using U = std::remove_const_t<T>;
  static constexpr bool saveable = (codec<U>::saveable && !std::is_abstract_v<U>) || is_open_polymorphic_v<U>;
  static constexpr bool loadable = loads_itself_v<U> || is_open_polymorphic_v<U>;
  static constexpr std::size_t min_size = 1;
  enum : std::uint8_t { null = 0, fresh = 1, earlier = 2 };

  static void save(output_archive& ar, const std::shared_ptr<T>& p) {
    if (!p) {
      *ar.grow(1) = std::byte{null};
      return;
    }
    const U& object = *p;
    const auto d = describe_object(object, "std::shared_ptr");
    saved_objects& seen = ar.saved_objects();
    const auto key = std::make_pair(d.address, d.type ? d.type->tag : static_cast<const void*>(&type_tag<U>));
    if (auto it = seen.seen.find(key); it != seen.seen.end()) {
      if (!it->second.complete)
        throw error("cppless: cannot serialize a cycle of std::shared_ptr (an object of type " + demangle(typeid(U).name()) +
                    " points, through its members, back to itself)");
      std::byte* out = ar.grow(5);
      out[0] = std::byte{earlier};
      std::memcpy(out + 1, &it->second.index, 4);
      return;
    }
    if (seen.count == UINT32_MAX) throw error("cppless: more than 4 billion shared objects in one payload");
    auto placed = seen.seen.emplace(key, saved_objects::record{seen.count++, false}).first;
    *ar.grow(1) = std::byte{fresh};
    write_type_id(ar, d);
    write_object(ar, object, d);
    placed->second.complete = true;  // std::map nodes stay put while others are added
  }

  static void load(input_archive& ar, std::shared_ptr<T>& p) {
    const auto flag = static_cast<std::uint8_t>(*ar.take(1, "std::shared_ptr flag"));
    const std::size_t at = ar.position() - 1;
    if (flag == null) {
      p.reset();
    } else if (flag == earlier) {
      p = load_earlier(ar, at);
    } else if (flag == fresh) {
      p = load_fresh(ar, at);
    } else {
      throw_corrupt("std::shared_ptr flag", "is " + std::to_string(flag) + " (must be 0, 1 or 2)", at);
    }
  }

 private:
  static std::shared_ptr<U> load_earlier(input_archive& ar, std::size_t at) {
    std::uint32_t index;
    std::memcpy(&index, ar.take(4, "std::shared_ptr index"), 4);
    auto& objects = ar.loaded_objects().objects;
    if (index >= objects.size())
      throw_corrupt("std::shared_ptr", "refers to object " + std::to_string(index) + " but only " +
                                           std::to_string(objects.size()) + " came before it", at);
    const loaded_objects::record& r = objects[index];
    if (!r.complete) throw_corrupt("std::shared_ptr", "refers to object " + std::to_string(index) + ", which contains it (a cycle)", at);
    U* object = nullptr;
    if (r.type_tag == &type_tag<U>) object = static_cast<U*>(r.owner.get());
    else if constexpr (is_open_polymorphic_v<U>) object = upcast<U>(r.owner.get(), r.throw_pointer);
    if (object == nullptr)
      throw_corrupt("std::shared_ptr", "refers to object " + std::to_string(index) + ", which is of another type", at);
    return std::shared_ptr<U>(r.owner, object);
  }

  static std::shared_ptr<U> load_fresh(input_archive& ar, std::size_t at) {
    const polymorphic_type* type = read_type_id<U>(ar, "std::shared_ptr type id");
    auto& objects = ar.loaded_objects().objects;
    const std::size_t index = objects.size();
    std::shared_ptr<U> result;
    if (type == nullptr) {
      if constexpr (loads_itself_v<U>) {
        auto made = std::make_shared<U>();
        objects.push_back({made, &type_tag<U>, &throw_as_pointer<U>, false});
        load_value(ar, *made);
        result = std::move(made);
      }
    } else if constexpr (is_open_polymorphic_v<U>) {
      std::shared_ptr<void> made = type->make_shared();
      U* base = upcast<U>(made.get(), type->throw_pointer);
      if (base == nullptr) throw_not_derived("std::shared_ptr", *type, typeid(U), at);
      objects.push_back({made, type->tag, type->throw_pointer, false});
      type->load(ar, made.get());
      result = std::shared_ptr<U>(std::move(made), base);
    }
    ar.loaded_objects().objects[index].complete = true;  // (the vector may have grown meanwhile)
    return result;
  }
};
template <class T>
struct codec<std::shared_ptr<T[]>> : codec<void> {};

}  // namespace cppless::detail
