#include "elf_check.hpp"

#include <elf.h>

#include <cstring>
#include <map>
#include <stdexcept>

namespace cppless::tools {

namespace {

// Reads a T at `offset`, refusing any table that points outside the file.
template <class T>
T at(std::string_view bytes, std::uint64_t offset, const std::string& name) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T))
    throw std::runtime_error(name + ": malformed ELF file (a table points outside the file)");
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::string c_string(std::string_view bytes, std::uint64_t table, std::uint64_t table_size, std::uint64_t index,
                     const std::string& name) {
  if (index >= table_size || table > bytes.size() || bytes.size() - table < table_size)
    throw std::runtime_error(name + ": malformed ELF file (a name outside its string table)");
  const std::string_view strings = bytes.substr(table, table_size);
  const std::size_t end = strings.find('\0', index);
  if (end == std::string_view::npos) throw std::runtime_error(name + ": malformed ELF file (an unterminated name)");
  return std::string(strings.substr(index, end - index));
}

// "GLIBC_2.34" -> {"GLIBC", {2, 34}}.
std::pair<std::string, std::vector<unsigned>> split_version(const std::string& v) {
  const auto underscore = v.find('_');
  if (underscore == std::string::npos) return {v, {}};
  std::vector<unsigned> parts;
  unsigned n = 0;
  bool digits = false;
  for (char c : v.substr(underscore + 1)) {
    if (c >= '0' && c <= '9') {
      n = n * 10 + static_cast<unsigned>(c - '0');
      digits = true;
    } else if (c == '.' && digits) {
      parts.push_back(n);
      n = 0;
      digits = false;
    } else {
      return {v, {}};  // e.g. GLIBC_PRIVATE: not a numbered version
    }
  }
  if (digits) parts.push_back(n);
  return {v.substr(0, underscore), parts};
}

}  // namespace

bool is_elf(std::string_view bytes) { return bytes.size() >= SELFMAG && std::memcmp(bytes.data(), ELFMAG, SELFMAG) == 0; }

elf_info read_elf(std::string_view bytes, const std::string& name) {
  if (!is_elf(bytes)) throw std::runtime_error(name + " is not an ELF file");
  const auto h = at<Elf64_Ehdr>(bytes, 0, name);
  if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB)
    throw std::runtime_error(name + ": not a 64-bit little-endian ELF file (Lambda runs x86_64 and arm64 only)");
  elf_info info;
  info.architecture = h.e_machine == EM_X86_64    ? "x86_64"
                      : h.e_machine == EM_AARCH64 ? "arm64"
                                                  : "machine " + std::to_string(h.e_machine);
  if (h.e_shentsize != sizeof(Elf64_Shdr) || h.e_shnum == 0) return info;  // no section table to read
  std::vector<Elf64_Shdr> sections;
  for (unsigned i = 0; i < h.e_shnum; ++i)
    sections.push_back(at<Elf64_Shdr>(bytes, h.e_shoff + std::uint64_t{i} * sizeof(Elf64_Shdr), name));
  auto linked_strings = [&](const Elf64_Shdr& s) -> const Elf64_Shdr& {
    if (s.sh_link >= sections.size()) throw std::runtime_error(name + ": malformed ELF file (bad sh_link)");
    return sections[s.sh_link];
  };

  std::map<unsigned, std::size_t> need_by_index;  // version index -> entry of info.versions
  const Elf64_Shdr* dynsym = nullptr;
  const Elf64_Shdr* versym = nullptr;
  for (const auto& s : sections) {
    if (s.sh_type == SHT_DYNAMIC) {
      const auto& str = linked_strings(s);
      for (std::uint64_t off = 0; off + sizeof(Elf64_Dyn) <= s.sh_size; off += sizeof(Elf64_Dyn)) {
        const auto d = at<Elf64_Dyn>(bytes, s.sh_offset + off, name);
        if (d.d_tag == DT_NULL) break;
        if (d.d_tag == DT_NEEDED) info.needed.push_back(c_string(bytes, str.sh_offset, str.sh_size, d.d_un.d_val, name));
      }
    } else if (s.sh_type == SHT_GNU_verneed) {
      const auto& str = linked_strings(s);
      std::uint64_t off = s.sh_offset;
      for (unsigned n = 0; n < 4096; ++n) {  // bounded: a loop in vn_next must not spin
        const auto need = at<Elf64_Verneed>(bytes, off, name);
        const std::string library = c_string(bytes, str.sh_offset, str.sh_size, need.vn_file, name);
        std::uint64_t aux_off = off + need.vn_aux;
        for (unsigned a = 0; a < need.vn_cnt && a < 4096; ++a) {
          const auto aux = at<Elf64_Vernaux>(bytes, aux_off, name);
          need_by_index[aux.vna_other & 0x7fff] = info.versions.size();
          info.versions.push_back({library, c_string(bytes, str.sh_offset, str.sh_size, aux.vna_name, name), {}});
          if (aux.vna_next == 0) break;
          aux_off += aux.vna_next;
        }
        if (need.vn_next == 0) break;
        off += need.vn_next;
      }
    } else if (s.sh_type == SHT_DYNSYM) {
      dynsym = &s;
    } else if (s.sh_type == SHT_GNU_versym) {
      versym = &s;
    }
  }
  // One symbol per needed version, so a refusal can say what asked for it.
  if (dynsym && versym && !need_by_index.empty()) {
    const auto& str = linked_strings(*dynsym);
    const std::uint64_t count = dynsym->sh_size / sizeof(Elf64_Sym);
    for (std::uint64_t i = 0; i < count && i < versym->sh_size / 2; ++i) {
      const auto index = static_cast<unsigned>(at<Elf64_Versym>(bytes, versym->sh_offset + 2 * i, name) & 0x7fff);
      const auto found = need_by_index.find(index);
      if (found == need_by_index.end() || !info.versions[found->second].symbol.empty()) continue;
      const auto sym = at<Elf64_Sym>(bytes, dynsym->sh_offset + i * sizeof(Elf64_Sym), name);
      info.versions[found->second].symbol = c_string(bytes, str.sh_offset, str.sh_size, sym.st_name, name);
    }
  }
  return info;
}

std::vector<std::string> above_lambda_os(const elf_info& info, const std::string& name) {
  // What provided.al2023 has: glibc 2.34, GCC 11's libstdc++ and libgcc_s.
  static const std::map<std::string, std::vector<unsigned>> newest = {
      {"GLIBC", {2, 34}}, {"GLIBCXX", {3, 4, 29}}, {"CXXABI", {1, 3, 13}}, {"GCC", {11, 0, 0}}};
  std::vector<std::string> problems;
  for (const auto& v : info.versions) {
    const auto [family, numbers] = split_version(v.version);
    const auto limit = newest.find(family);
    if (limit == newest.end() || numbers.empty() || !(limit->second < numbers)) continue;
    problems.push_back(name + " needs " + v.version + (v.symbol.empty() ? "" : " (symbol " + v.symbol + ")") +
                       ", from " + v.library);
  }
  return problems;
}

}  // namespace cppless::tools
