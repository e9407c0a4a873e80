// Fuzz target for the logfile reader: any bytes must give an error or a valid trace, never a
// crash. tests/merge/fuzz/ builds it as a libFuzzer target under AddressSanitizer and UBSan (ctest
// label fuzz); the suite's own build makes it a plain program whose main() below mutates a small
// valid logfile for a few seconds (ctest: fuzz_reader_brief) or replays files.
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "mpe/log_reader.h"
#include "mpe/log_writer.h"

using namespace mpe::format;

namespace {

// Recomputes the checksums of the chunk at off; returns the offset after it, or 0 when no chunk
// fits there.
size_t reseal_chunk(uint8_t* data, size_t size, size_t off) {
  ChunkHeader h;
  if (off > size || size - off < sizeof h) return 0;
  std::memcpy(&h, data + off, sizeof h);
  if (h.magic != kChunkMagic || h.payload_size > size - off - sizeof h) return 0;
  h.payload_hash = hash64(data + off + sizeof h, h.payload_size);
  seal(&h);
  std::memcpy(data + off, &h, sizeof h);
  return off + sizeof h + h.payload_size;
}

// Makes a damaged logfile's checksums right again, so that mutations reach the parsing behind
// them (definitions, index, chunk decoding) instead of stopping at the first checksum.
void reseal(uint8_t* data, size_t size) {
  FileHeader fh;
  Footer ft;
  if (size < sizeof fh + sizeof ft) return;
  std::memcpy(&fh, data, sizeof fh);
  seal(&fh);
  std::memcpy(data, &fh, sizeof fh);
  for (size_t off = sizeof fh; off != 0;) off = reseal_chunk(data, size, off);
  std::memcpy(&ft, data + size - sizeof ft, sizeof ft);
  reseal_chunk(data, size, ft.definitions_offset);
  if (ft.index_offset <= size && ft.index_count <= (size - ft.index_offset) / sizeof(IndexEntry))
    ft.index_hash = hash64(data + ft.index_offset, ft.index_count * sizeof(IndexEntry));
  seal(&ft);
  std::memcpy(data + size - sizeof ft, &ft, sizeof ft);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const int fd = memfd_create("mpelog-fuzz", 0);
  if (fd < 0) return 0;
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  auto f = LogFile::open("/proc/self/fd/" + std::to_string(fd));
  if (f.ok()) {
    auto tr = load_trace(*f);
    (void)tr;
  }
  return 0;
}

#ifdef MPE_FUZZ_LIBFUZZER
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

// libFuzzer's own mutations; every other input then gets its checksums made right.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed & 1) reseal(data, size);
  return size;
}
#endif

#ifndef MPE_FUZZ_LIBFUZZER
namespace {

// A small valid logfile: two ranks, states, messages, a user state.
std::string seed_log() {
  char tmpl[] = "/tmp/mpelog-seed-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd >= 0) close(fd);
  LogWriter w;
  if (!w.open(tmpl).ok()) return {};
  Definitions d;
  d.world_size = 2;
  d.program = "seed";
  d.clock = "tsc";
  d.categories = mpi_categories({"MPI_Send", "MPI_Recv"});
  for (uint32_t r = 0; r < 2; ++r) {
    RankMeta m;
    m.rank = r;
    m.world_size = 2;
    m.comms = {CommDef{0, 0, false, {0, 1}}};
    m.sync.valid = 3;
    m.sync.t_final = 100000;
    m.sync.offset_final = 5;
    m.user_categories = {
        Category{kUserCategoryBase, CategoryKind::kState, kUserCategoryBase + 1u, 0xFF0000, "u"}};
    d.ranks.push_back(m);
    std::vector<Record> recs;
    for (int i = 0; i < 50; ++i) {
      Record s{};
      s.time = 1000 + 100 * i;
      s.kind = 1;
      s.cat = static_cast<uint16_t>(r);
      s.c = 40;
      recs.push_back(s);
      Record m2{};
      m2.time = s.time + (r ? 50 : 0);
      m2.kind = r ? 3 : 2;
      m2.a = r ? 0 : 1;
      m2.b = 7;
      m2.c = 8;
      recs.push_back(m2);
    }
    Record u{};
    u.kind = 6;
    u.cat = kUserCategoryBase;
    u.time = 2000;
    recs.push_back(u);
    u.cat = kUserCategoryBase + 1;
    u.time = 3000;
    recs.push_back(u);
    std::string c;
    encode_events(recs.data(), static_cast<uint32_t>(recs.size()), r, 0, 1, &c);
    if (!w.add_events_chunk(c).ok()) return {};
  }
  merge_user_categories(&d);
  if (!w.finish(d).ok()) return {};
  std::ifstream in(tmpl, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), {});
  unlink(tmpl);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {  // replay files
    for (int i = 1; i < argc; ++i) {
      std::ifstream in(argv[i], std::ios::binary);
      std::string s((std::istreambuf_iterator<char>(in)), {});
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    }
    return 0;
  }
  const std::string seed = seed_log();
  if (seed.empty()) {
    std::fprintf(stderr, "fuzz_reader: could not build the seed log\n");
    return 1;
  }
  const double seconds = std::getenv("MPE_FUZZ_SECONDS") ? std::atof(std::getenv("MPE_FUZZ_SECONDS")) : 3.0;
  std::mt19937_64 rng(12345);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  long runs = 0;
  while (std::chrono::steady_clock::now() < end) {
    std::string s = seed;
    switch (rng() % 4) {
      case 0:  // truncate
        s.resize(rng() % s.size());
        break;
      case 1:  // flip a few bytes
        for (int k = 1 + static_cast<int>(rng() % 8); k > 0; --k)
          s[rng() % s.size()] ^= static_cast<char>(1 + rng() % 255);
        break;
      case 2: {  // overwrite a 4- or 8-byte field with an extreme value
        const size_t at = rng() % (s.size() - 8);
        const uint64_t v = (rng() & 1) ? ~0ull : (1ull << (rng() % 64));
        std::memcpy(&s[at], &v, (rng() & 1) ? 4 : 8);
        break;
      }
      default:  // splice a piece of the file elsewhere
      {
        const size_t a = rng() % s.size(), b = rng() % s.size(), n = rng() % 256;
        s.replace(a, std::min(n, s.size() - a), s.substr(b, n));
      }
    }
    if (rng() & 1) reseal(reinterpret_cast<uint8_t*>(s.data()), s.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    ++runs;
  }
  std::printf("fuzz_reader: %ld mutated logfiles read without a crash\n", runs);
  return 0;
}
#endif
