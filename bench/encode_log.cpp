// Re-encodes the events chunks of a logfile as liblog does (format::encode_events, the same
// level), to count what encoding costs per record on times a native run logged:
// bench/instructions_per_call.sh runs it under callgrind, counting encode_events alone. Under
// callgrind the loop's own times are spread by its slowdown, and compress worse than a real run's.
// Usage: encode_log LOG [zstd level, default 1]. Prints the records and their bytes re-encoded.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mpe/chunk_codec.h"
#include "mpe/log_reader.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: encode_log LOG [zstd level]\n");
    return 2;
  }
  const int level = argc > 2 ? std::atoi(argv[2]) : 1;
  auto log = mpe::format::LogFile::open(argv[1]);
  if (!log.ok()) {
    std::fprintf(stderr, "encode_log: %s\n", log.status().to_string().c_str());
    return 1;
  }
  uint64_t records = 0, encoded = 0;
  mpe::format::LogFile::ChunkScratch scratch;
  std::vector<mpe::format::Record> chunk;
  for (size_t i = 0; i < log->index().size(); ++i) {
    if (auto s = log->read_chunk(i, &scratch, &chunk); !s.ok()) {
      std::fprintf(stderr, "encode_log: chunk %zu: %s\n", i, s.to_string().c_str());
      return 1;
    }
    std::string out;
    mpe::format::encode_events(chunk.data(), static_cast<uint32_t>(chunk.size()), 0, 0, level, &out);
    records += chunk.size();
    encoded += out.size();
  }
  std::printf("%llu records, %llu bytes re-encoded\n", static_cast<unsigned long long>(records),
              static_cast<unsigned long long>(encoded));
  return 0;
}
