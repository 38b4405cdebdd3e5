// cppless/archive/core.hpp — the two binary archives (output_archive, input_archive) and the wire
// format. Include <cppless/archive.hpp>, not this part: every codec must be visible where an
// archive is used.
//
// Wire format (version 1). Both ends are builds of the same sources (calls carry a fingerprint
// of their types, checked before decoding), so nothing is self-describing: no type tags, no
// names, no versions. Everything is little-endian and fixed width:
//
//   arithmetic T           sizeof(T) bytes, the host representation (two's complement, IEEE 754;
//                          long double is the host's format and is not portable across arches)
//   bool                   1 byte, 0 or 1
//   enum                   its underlying type
//   length (any container) u64 element count (characters for strings, bits for vector<bool>)
//   std::basic_string      length, then length * sizeof(CharT) bytes
//   std::vector<T>         length, then the elements; for arithmetic/enum T one block of bytes
//   std::vector<bool>      length in bits, then ceil(bits / 8) bytes, bit i in byte i/8 at
//                          (1 << i%8); unused high bits are 0
//   std::bitset<N>         ceil(N / 8) bytes, bits as for vector<bool>
//   T[N], std::array       the N elements, no length
//   pair, tuple            the elements in order
//   map/set/list/deque/…   length, then the elements in iteration order (map: key then value);
//                          valarray as vector; stack/queue/priority_queue as their container
//   std::atomic<T>         T
//   std::optional, std::unique_ptr
//                          u8 flag 0 (empty) or 1, then the value if 1
//   std::shared_ptr        u8 0 (empty); 1 (an object not met before in this payload: it gets
//                          the next index, from 0), then the value; 2 then u32 index (the same
//                          object as that earlier one)
//   pointer to a polymorphic class (unique_ptr, and shared_ptr after flag 1)
//                          u64 type id before the value: 0 for the pointer's own class, else the
//                          registered derived class (CPPLESS_REGISTER_TYPE, archive/types/polymorphic.hpp)
//   std::variant           u32 alternative index, then the alternative
//   std::monostate         nothing
//   chrono::duration       its count (Rep); time_point: its time_since_epoch()
//   std::complex<T>        real, imag
//   user types             whatever their serialize/save writes (cereal::NameValuePair: the value
//                          only; cereal::SizeTag: a u64; cereal::binary_data: the raw bytes)
//
// Decoding checks every length against the bytes left before it allocates, rejects any flag, bool
// or variant index out of range, keys of ordered containers out of order (or repeated, for the
// unique ones) and repeated keys of unordered ones, and nesting of user types deeper than
// max_depth(); each violation throws cppless::decode_error naming what was being decoded.
// Memory: every element but those that encode to nothing is backed by at least one payload
// byte, and those are limited to 1 MiB per archive, so a payload of n bytes decodes to at most
// about n * (sizeof(element) / its minimal encoded size) + 1 MiB of elements. Reservations made
// before the elements have arrived are capped at 16 MiB per container.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cppless/byte_buffer.hpp"
#include "cppless/error.hpp"

// cereal interop: NameValuePair, SizeTag, binary_data, base_class and private members reached
// through `friend class cereal::access`. Define CPPLESS_NO_CEREAL to leave cereal out (cereal's
// headers need RTTI, so it is left out under -fno-rtti too).
#if !defined(CPPLESS_NO_CEREAL) && __has_include(<cereal/cereal.hpp>) && (defined(__cpp_rtti) || defined(__GXX_RTTI))
#define CPPLESS_HAS_CEREAL 1
#include <cereal/cereal.hpp>
#include <cereal/types/base_class.hpp>
#else
#define CPPLESS_HAS_CEREAL 0
#endif

static_assert(std::endian::native == std::endian::little,
              "cppless: the wire format is little-endian and is written with memcpy; this host is not little-endian");
static_assert(sizeof(std::size_t) == 8, "cppless: the archive assumes a 64-bit host");

namespace cppless {

class output_archive;
class input_archive;

namespace detail {

// codec<T> says whether T can be saved/loaded, the least number of bytes its encoding takes (used
// to bound element counts before allocating), and does the work. The primary template handles
// user types (cereal conventions, user_types.hpp); std_types.hpp specialises it for the standard
// library. Each codec has: saveable, loadable, min_size, save(output_archive&, const T&),
// load(input_archive&, T&).
template <class T>
struct codec;

template <class T>
void save_value(output_archive& ar, const T& value);
template <class T>
void load_value(input_archive& ar, T& value);

// The archives derive (privately, empty) from cereal::access so that namespace cereal is
// associated with them: a free `serialize(Archive&, Foo&)` that a user put in namespace cereal,
// as the cereal docs suggest for third-party types, is then found by argument-dependent lookup
// exactly as it is with cereal's own archives.
#if CPPLESS_HAS_CEREAL
using archive_lookup_base = ::cereal::access;
#else
struct archive_lookup_base {};
#endif

// Elements whose encoding is empty (std::monostate, an empty user struct) cannot be bounded by
// the bytes left, so the memory of all such elements decoded by one archive must stay under this.
// (No real payload comes near it: it takes a million std::monostate elements.)
inline constexpr std::size_t max_unbacked_bytes = std::size_t{1} << 20;

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_truncated(const char* what, std::size_t need,
                                                                    std::size_t left, std::size_t offset) {
  throw decode_error("truncated payload: " + std::string(what) + " needs " + std::to_string(need) +
                     " bytes but only " + std::to_string(left) + " are left (at byte " + std::to_string(offset) + ")");
}

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_length(const char* what, std::uint64_t n,
                                                                 std::size_t min_size, std::size_t left,
                                                                 std::size_t offset) {
  std::string each = min_size > 1 ? " (at least " + std::to_string(min_size) + " bytes each)" : "";
  std::string budget = min_size == 0 ? " and the budget for elements that encode to nothing" : "";
  throw decode_error("truncated payload: " + std::string(what) + " length " + std::to_string(n) + each +
                     " exceeds the " + std::to_string(left) + " bytes left" + budget + " (at byte " +
                     std::to_string(offset) + ")");
}

[[noreturn, gnu::cold, gnu::noinline]] inline void throw_corrupt(const char* what, const std::string& detail,
                                                                  std::size_t offset) {
  throw decode_error("corrupt payload: " + std::string(what) + " " + detail + " (at byte " + std::to_string(offset) + ")");
}

// Short names for messages ("truncated payload: int32 needs 4 bytes …").
template <class T>
constexpr const char* type_label() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_same_v<T, char>) return "char";
  else if constexpr (std::is_same_v<T, wchar_t>) return "wchar_t";
  else if constexpr (std::is_same_v<T, char8_t>) return "char8_t";
  else if constexpr (std::is_same_v<T, char16_t>) return "char16_t";
  else if constexpr (std::is_same_v<T, char32_t>) return "char32_t";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, long double>) return "long double";
  else if constexpr (std::is_integral_v<T>) {
    constexpr const char* s[] = {"int8", "int16", "int32", "int64"};
    constexpr const char* u[] = {"uint8", "uint16", "uint32", "uint64"};
    constexpr int i = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
    return std::is_signed_v<T> ? s[i] : u[i];
  } else if constexpr (std::is_enum_v<T>) return "enum";
  else return "value";
}

// Objects behind shared_ptrs met so far in one payload, so that two pointers to one object
// arrive as one object (types/memory.hpp). Keyed by the object's (most-derived) address and the
// tag of its type, so a member at its owner's address is not mistaken for its owner.
struct saved_objects {
  struct record {
    std::uint32_t index;
    bool complete;  // false while its value is being written: meeting it again is a cycle
  };
  std::map<std::pair<const void*, const void*>, record> seen;
  std::uint32_t count = 0;
};

struct loaded_objects {
  struct record {
    std::shared_ptr<void> owner;       // the most-derived object
    const void* type_tag;              // the tag of its type
    void (*throw_pointer)(void*);      // throws the object as a pointer to its type (for upcasts)
    bool complete;                     // false while its value is being read
  };
  std::vector<record> objects;
};

}  // namespace detail

// Whether T can be written / read / both by the archives (see the list in <cppless/archive.hpp>).
// Never a hard error: an unsupported T is simply false.
template <class T>
inline constexpr bool is_saveable_v = detail::codec<std::remove_cv_t<T>>::saveable;
template <class T>
inline constexpr bool is_loadable_v = detail::codec<std::remove_cv_t<T>>::loadable;
template <class T>
inline constexpr bool is_serializable_v = is_saveable_v<T> && is_loadable_v<T>;

// Writes values to the end of a byte_buffer. Cheap to create: make one per payload.
class output_archive : private detail::archive_lookup_base {
 public:
  // What cereal's archives say about themselves; user code branches on these.
  using is_saving = std::true_type;
  using is_loading = std::false_type;

  explicit output_archive(byte_buffer& out) noexcept : out_(&out) {}
  output_archive(const output_archive&) = delete;
  output_archive& operator=(const output_archive&) = delete;

  template <class... T>
  output_archive& operator()(const T&... values) {
    (detail::save_value(*this, values), ...);
    return *this;
  }
  template <class T>
  output_archive& operator<<(const T& value) { return (*this)(value); }
  template <class T>
  output_archive& operator&(const T& value) { return (*this)(value); }

  void write_bytes(const void* src, std::size_t n) { out_->append(src, n); }

  // For codecs: n bytes at the end of the payload, to be filled by the caller.
  [[nodiscard]] std::byte* grow(std::size_t n) { return out_->grow_uninitialized(n); }
  // For codecs: the payload will soon be at least `total` bytes; grow geometrically so that
  // repeated hints (nested containers) stay amortised O(1).
  void reserve_hint(std::size_t total) {
    if (total > out_->capacity()) out_->reserve(std::max(total, out_->capacity() * 2));
  }
  [[nodiscard]] byte_buffer& buffer() noexcept { return *out_; }

  // For the shared_ptr codec: the objects written so far (made on first use).
  [[nodiscard]] detail::saved_objects& saved_objects() {
    if (!saved_) saved_ = std::make_unique<detail::saved_objects>();
    return *saved_;
  }

 private:
  byte_buffer* out_;
  std::unique_ptr<detail::saved_objects> saved_;
};

// Reads values from a byte range it does not own; the range must outlive the archive.
class input_archive : private detail::archive_lookup_base {
 public:
  using is_saving = std::false_type;
  using is_loading = std::true_type;

  // Nesting of user types deeper than this is refused, so a crafted payload for a recursive type
  // (a linked list of unique_ptr, a tree) cannot overflow the stack.
  static constexpr std::size_t default_max_depth = 1000;

  input_archive(const std::byte* data, std::size_t size) noexcept : begin_(data), cur_(data), end_(data + size) {}
  explicit input_archive(std::span<const std::byte> bytes) noexcept : input_archive(bytes.data(), bytes.size()) {}
  input_archive(const input_archive&) = delete;
  input_archive& operator=(const input_archive&) = delete;

  // Forwarding references so that cereal wrappers made on the fly (make_nvp, make_size_tag,
  // binary_data, base_class) can be passed; everything is loaded in place.
  template <class... T>
  input_archive& operator()(T&&... values) {
    (load_one<T>(values), ...);
    return *this;
  }
  template <class T>
  input_archive& operator>>(T&& value) { return (*this)(std::forward<T>(value)); }
  template <class T>
  input_archive& operator&(T&& value) { return (*this)(std::forward<T>(value)); }

  void read_bytes(void* dst, std::size_t n) {
    const std::byte* src = take(n, "raw bytes");
    if (n != 0) std::memcpy(dst, src, n);
  }

  [[nodiscard]] std::size_t remaining() const noexcept { return static_cast<std::size_t>(end_ - cur_); }
  [[nodiscard]] std::size_t position() const noexcept { return static_cast<std::size_t>(cur_ - begin_); }

  // Throws decode_error unless every byte was consumed (a payload with trailing bytes was not
  // produced by the matching encoder).
  void expect_end() const {
    if (cur_ != end_)
      throw decode_error("corrupt payload: " + std::to_string(remaining()) + " trailing bytes after the value (decoded " +
                         std::to_string(position()) + " of " + std::to_string(position() + remaining()) + " bytes)");
  }

  // For codecs: consumes n bytes and returns where they start; throws if fewer are left.
  [[nodiscard]] const std::byte* take(std::size_t n, const char* what) {
    if (remaining() < n) [[unlikely]]
      detail::throw_truncated(what, n, remaining(), position());
    const std::byte* p = cur_;
    cur_ += n;
    return p;
  }

  // For codecs: reads a u64 element count and checks that `n` elements of at least `min_size`
  // bytes each fit in what is left, before the caller allocates anything for them. With
  // min_size 0 (elements that may encode to nothing) the elements beyond the bytes left must fit
  // in what remains of the archive's budget for empty elements (see charge_empty_element).
  [[nodiscard]] std::size_t read_length(const char* what, std::size_t min_size, std::size_t sizeof_element) {
    std::uint64_t n;
    std::memcpy(&n, take(sizeof n, what), sizeof n);
    const std::size_t left = remaining();
    const bool fits = min_size != 0 ? n <= left / min_size
                                    : n <= left || n - left <= unbacked_left_ / std::max<std::size_t>(sizeof_element, 1);
    if (!fits) [[unlikely]]
      detail::throw_length(what, n, min_size, left, position());
    return static_cast<std::size_t>(n);
  }

  // For codecs: an element taking `bytes_in_memory` was decoded from no payload bytes at all.
  // Such elements are limited to detail::max_unbacked_bytes per archive in total, so nested
  // counts of empty elements cannot multiply into gigabytes.
  void charge_empty_element(std::size_t bytes_in_memory, const char* what) {
    if (bytes_in_memory > unbacked_left_) [[unlikely]]
      detail::throw_corrupt(what, "holds more elements that encode to nothing than one payload may (" +
                                      std::to_string(detail::max_unbacked_bytes) + " bytes of them in memory)",
                            position());
    unbacked_left_ -= bytes_in_memory;
  }

  // For the shared_ptr codec: the objects read so far (made on first use).
  [[nodiscard]] detail::loaded_objects& loaded_objects() {
    if (!loaded_) loaded_ = std::make_unique<detail::loaded_objects>();
    return *loaded_;
  }

  [[nodiscard]] std::size_t max_depth() const noexcept { return max_depth_; }
  void set_max_depth(std::size_t depth) noexcept { max_depth_ = depth; }

  // For codecs of user types: counts one level of nesting while alive.
  class depth_guard {
   public:
    explicit depth_guard(input_archive& ar) : ar_(ar) {
      if (++ar_.depth_ > ar_.max_depth_) [[unlikely]] {
        --ar_.depth_;
        detail::throw_corrupt("value", "nests deeper than max_depth " + std::to_string(ar_.max_depth_), ar_.position());
      }
    }
    ~depth_guard() { --ar_.depth_; }
    depth_guard(const depth_guard&) = delete;
    depth_guard& operator=(const depth_guard&) = delete;

   private:
    input_archive& ar_;
  };

 private:
  template <class T>
  void load_one(std::remove_reference_t<T>& value) {
    static_assert(!std::is_const_v<std::remove_reference_t<T>>,
                  "cppless: cannot load into a const object (an argument to input_archive::operator() is const)");
    if constexpr (!std::is_const_v<std::remove_reference_t<T>>) detail::load_value(*this, value);
  }

  const std::byte* begin_;
  const std::byte* cur_;
  const std::byte* end_;
  std::size_t depth_ = 0;
  std::size_t max_depth_ = default_max_depth;
  std::size_t unbacked_left_ = detail::max_unbacked_bytes;
  std::unique_ptr<detail::loaded_objects> loaded_;
};

namespace detail {

template <class T>
inline constexpr bool always_false_v = false;

template <class T>
inline void save_value(output_archive& ar, const T& value) {
  if constexpr (codec<T>::saveable) {
    codec<T>::save(ar, value);
  } else {
    static_assert(is_saveable_v<T>,
                  "cppless: type T is not serializable: give it a serialize(Archive&) member (cereal convention), "
                  "or save(Archive&) const + load(Archive&), or pass it as a supported type (arithmetic, enum, "
                  "std::string, std containers, pair/tuple, optional, variant, unique_ptr/shared_ptr to a value, "
                  "chrono::duration, complex). Raw pointers, references, std::string_view, std::span, "
                  "std::function, threads and mutexes cannot be serialized. T is named in the requirement.");
  }
}

template <class T>
inline void load_value(input_archive& ar, T& value) {
  if constexpr (codec<T>::loadable) {
    codec<T>::load(ar, value);
  } else {
    static_assert(is_loadable_v<T>,
                  "cppless: type T is not serializable (or cannot be loaded): give it a serialize(Archive&) member "
                  "(cereal convention), or save(Archive&) const + load(Archive&), or pass it as a supported type "
                  "(arithmetic, enum, std::string, std containers, pair/tuple, optional, variant, "
                  "unique_ptr/shared_ptr to a default-constructible value, chrono::duration, complex). Raw "
                  "pointers, references, std::string_view, std::span, std::function, threads and mutexes cannot "
                  "be serialized. T is named in the requirement.");
  }
}

}  // namespace detail
}  // namespace cppless
