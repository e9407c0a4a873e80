// Re-encodes the events chunks of a logfile as liblog does (format::encode_events, the same
// level), to count what encoding costs per record on times a native run logged:
// bench/instructions_per_call.sh runs it under callgrind, counting encode_events alone. Under
// callgrind the loop's own times are spread by its slowdown, and compress worse than a real run's.
// Usage: encode_log LOG [zstd level, default 1]. Prints the records and their bytes re-encoded.
//        encode_log --time LOG: encodes and decodes all chunks, in memory, 5 times, and prints
//        the medians in ns per record (wall clock: run it on a quiet machine, or A/B two builds
//        alternately).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpe/chunk_codec.h"
#include "mpe/log_reader.h"
#include "paired.h"

namespace {

using mpe::format::Record;

// Every events chunk of the log, decoded; false (and a message) when the log cannot be read.
bool read_chunks(const char* path, std::vector<std::vector<Record>>* chunks) {
  auto log = mpe::format::LogFile::open(path);
  if (!log.ok()) {
    std::fprintf(stderr, "encode_log: %s\n", log.status().to_string().c_str());
    return false;
  }
  mpe::format::LogFile::ChunkScratch scratch;
  for (size_t i = 0; i < log->index().size(); ++i) {
    std::vector<Record> chunk;
    if (auto s = log->read_chunk(i, &scratch, &chunk); !s.ok()) {
      std::fprintf(stderr, "encode_log: chunk %zu: %s\n", i, s.to_string().c_str());
      return false;
    }
    chunks->push_back(std::move(chunk));
  }
  return true;
}

int time_codec(const std::vector<std::vector<Record>>& chunks) {
  size_t records = 0, bytes = 0;
  for (const auto& c : chunks) records += c.size();
  if (records == 0) {
    std::fprintf(stderr, "encode_log: the log holds no records\n");
    return 1;
  }
  std::vector<double> encode_ns, decode_ns;
  std::vector<std::string> encoded(chunks.size());
  std::vector<Record> back;
  std::string scratch;
  for (int pass = 0; pass < 5; ++pass) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    for (size_t i = 0; i < chunks.size(); ++i) {
      encoded[i].clear();
      mpe::format::encode_events(chunks[i].data(), static_cast<uint32_t>(chunks[i].size()), 0, 0, 1,
                                 &encoded[i]);
    }
    const auto t1 = clock::now();
    for (const std::string& chunk : encoded) {
      mpe::format::ChunkHeader h;
      std::memcpy(&h, chunk.data(), sizeof h);
      if (!mpe::format::decode_events(h, chunk.data() + sizeof h, &back, &scratch).ok()) {
        std::fprintf(stderr, "encode_log: a re-encoded chunk does not decode\n");
        return 1;
      }
    }
    const auto t2 = clock::now();
    encode_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                        static_cast<double>(records));
    decode_ns.push_back(std::chrono::duration<double, std::nano>(t2 - t1).count() /
                        static_cast<double>(records));
  }
  for (const std::string& chunk : encoded) bytes += chunk.size();
  std::printf(
      "%zu records: encode %.1f ns a record, decode %.1f ns a record (medians of 5 passes), %.3f bytes a "
      "record\n",
      records, mpe::bench::median(encode_ns), mpe::bench::median(decode_ns),
      static_cast<double>(bytes) / static_cast<double>(records));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool timing = argc == 3 && std::strcmp(argv[1], "--time") == 0;
  if (argc < 2 || (!timing && std::strcmp(argv[1], "--time") == 0)) {
    std::fprintf(stderr, "usage: encode_log LOG [zstd level] | encode_log --time LOG\n");
    return 2;
  }
  std::vector<std::vector<Record>> chunks;
  if (!read_chunks(timing ? argv[2] : argv[1], &chunks)) return 1;
  if (timing) return time_codec(chunks);
  const int level = argc > 2 ? std::atoi(argv[2]) : 1;
  uint64_t records = 0, encoded = 0;
  for (const auto& chunk : chunks) {
    std::string out;
    mpe::format::encode_events(chunk.data(), static_cast<uint32_t>(chunk.size()), 0, 0, level, &out);
    records += chunk.size();
    encoded += out.size();
  }
  std::printf("%llu records, %llu bytes re-encoded\n", static_cast<unsigned long long>(records),
              static_cast<unsigned long long>(encoded));
  return 0;
}
