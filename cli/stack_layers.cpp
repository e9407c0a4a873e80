// `mpe run --stack`: each named library checked, before launching, to be a PMPI tool that
// libmpestack can load (docs/stack.md).
#include "stack_layers.h"

#include <elf.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>

#include "mpe/stack_list.h"

namespace mpe::cli {

namespace {

template <typename T>
bool read_at(const std::string& bytes, uint64_t offset, T* out) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return false;
  std::memcpy(out, bytes.data() + offset, sizeof(T));
  return true;
}

}  // namespace

StatusOr<std::vector<std::string>> defined_mpi_functions(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kIoError, path + ": cannot be read");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Elf64_Ehdr header;
  if (!read_at(bytes, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_type != ET_DYN)
    return Status(StatusCode::kInvalidArgument, path + " is not a 64-bit ELF shared library");
  auto section = [&](uint64_t index, Elf64_Shdr* out) {
    return index < header.e_shnum && read_at(bytes, header.e_shoff + index * sizeof(Elf64_Shdr), out);
  };
  std::vector<std::string> names;
  for (uint64_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr symbols, strings;
    if (!section(i, &symbols) || symbols.sh_type != SHT_DYNSYM) continue;
    if (!section(symbols.sh_link, &strings) || strings.sh_offset > bytes.size() ||
        bytes.size() - strings.sh_offset < strings.sh_size)
      return Status(StatusCode::kCorrupt, path + ": damaged dynamic symbol table");
    const std::string_view table(bytes.data() + strings.sh_offset, strings.sh_size);
    for (uint64_t at = symbols.sh_offset; at + sizeof(Elf64_Sym) <= symbols.sh_offset + symbols.sh_size;
         at += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      if (!read_at(bytes, at, &sym))
        return Status(StatusCode::kCorrupt, path + ": damaged dynamic symbol table");
      if (sym.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_name >= table.size())
        continue;
      const std::string_view name = table.substr(sym.st_name, table.find('\0', sym.st_name) - sym.st_name);
      if (name.rfind("MPI_", 0) == 0) names.emplace_back(name);
    }
  }
  return names;
}

StatusOr<std::string> resolve_stack(const std::string& listed, bool with_suite) {
  std::string out;
  auto append = [&out](std::string_view entry) {
    if (!out.empty()) out += stack::kSeparator;
    out += entry;
  };
  bool suite_named = false;
  int layers = 0;
  std::string_view rest = listed;
  std::string_view named;
  while (stack::next_entry(rest, &named)) {
    const std::string entry(named);
    ++layers;
    if (entry == stack::kSuiteEntry) {
      if (!with_suite)
        return Status(StatusCode::kInvalidArgument,
                      "--stack names mpe, but no tool of ours is chosen: add --time, --umq, --log or --live");
      suite_named = true;
      append(entry);
      continue;
    }
    std::error_code ec;
    const std::filesystem::path path = std::filesystem::absolute(entry, ec).lexically_normal();
    if (ec || !std::filesystem::is_regular_file(path, ec))
      return Status(StatusCode::kInvalidArgument, "--stack: " + entry + " is not a file");
    auto functions = defined_mpi_functions(path);
    if (!functions.ok()) return Status(functions.status().code(), "--stack: " + functions.status().message());
    if (functions->empty())
      return Status(StatusCode::kInvalidArgument,
                    "--stack: " + entry + " defines no MPI_ function, so it is not a PMPI tool");
    if (path.string().find(stack::kSeparator) != std::string::npos)
      return Status(StatusCode::kInvalidArgument,
                    "--stack: " + entry + ": a path with a comma cannot be listed");
    append(path.string());
  }
  if (layers == 0) return Status(StatusCode::kInvalidArgument, "--stack: no library named");
  if (layers + (with_suite && !suite_named) > stack::kMaxLayers)
    return Status(StatusCode::kInvalidArgument,
                  "--stack: at most " + std::to_string(stack::kMaxLayers) + " layers, ours included");
  if (with_suite && !suite_named)  // ours on top unless placed
    out = std::string(stack::kSuiteEntry) + stack::kSeparator + out;
  return out;
}

}  // namespace mpe::cli
