// Unit tests of the logfile format library: round trips, message matching, and clear errors for
// files that are not logfiles, newer, truncated or corrupt.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "mpe/log_reader.h"
#include "mpe/log_writer.h"
#include "mpe/part_file.h"
#include "mpe/recover.h"

using namespace mpe::format;

namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "mpelog_test_" + std::to_string(getpid()) + "_" + name;
}

Record rec(RecordKind k, uint64_t t, uint16_t cat, int32_t a = 0, int32_t b = 0, uint32_t comm = 0,
           uint64_t c = 0) {
  return make_record(k, t, cat, a, b, comm, c);
}

Definitions two_rank_defs() {
  Definitions d;
  d.world_size = 2;
  d.program = "test";
  d.clock = "monotonic";
  d.ticks_per_second = 1e9;
  d.categories = mpi_categories({"MPI_Send", "MPI_Recv", "MPI_Barrier"});
  for (uint32_t r = 0; r < 2; ++r) {
    RankMeta m;
    m.rank = r;
    m.world_size = 2;
    m.host = "h";
    m.threads = {ThreadDef{0, 100 + r}};
    m.comms = {CommDef{0, 0, false, {0, 1}}, CommDef{1, 1000 + r, false, {static_cast<int32_t>(r)}}};
    m.user_categories = {
        Category{kUserCategoryBase, CategoryKind::kState, kUserCategoryBase + 1u, 0xFF0000, "compute"}};
    d.ranks.push_back(m);
  }
  merge_user_categories(&d);
  return d;
}

// Writes the two-rank log to path: rank 0 sends 3 messages to rank 1 (tag 5); rank 1 receives
// them; rank 1 has a user state.
mpe::Status write_two_rank_log(const std::string& path) {
  LogWriter w;
  MPE_RETURN_IF_ERROR(w.open(path));
  std::vector<Record> r0, r1;
  for (int i = 0; i < 3; ++i) {
    const uint64_t t = 1000 + 100 * i;
    r0.push_back(rec(RecordKind::kState, t, 0, 0, 0, 0, 20));
    r0.push_back(rec(RecordKind::kSend, t, 0, 1, 5, 0, 8));
    r1.push_back(rec(RecordKind::kState, t - 10, 1, 0, 0, 0, 50));
    r1.push_back(rec(RecordKind::kRecv, t + 40, 1, 0, 5, 0, 8));
  }
  r1.push_back(rec(RecordKind::kUserEvent, 1500, kUserCategoryBase));
  r1.push_back(rec(RecordKind::kUserEvent, 1600, kUserCategoryBase + 1));
  std::string c0, c1;
  encode_events(r0.data(), static_cast<uint32_t>(r0.size()), 0, 0, 1, &c0);
  encode_events(r1.data(), static_cast<uint32_t>(r1.size()), 1, 0, 1, &c1);
  MPE_RETURN_IF_ERROR(w.add_events_chunk(c0));
  MPE_RETURN_IF_ERROR(w.add_events_chunk(c1));
  return w.finish(two_rank_defs());
}

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void spit(const std::string& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(s.data(), static_cast<std::streamsize>(s.size()));
}

}  // namespace

TEST(Codec, EventsRoundTripWithNegativeDeltas) {
  std::vector<Record> in;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 1000; ++i)
    in.push_back(rec(RecordKind::kState, rng() % 100000, i % 7, i % 3, -i, 2, rng()));
  std::string chunk;
  encode_events(in.data(), static_cast<uint32_t>(in.size()), 3, 2, 1, &chunk);
  ChunkHeader h;
  std::memcpy(&h, chunk.data(), sizeof h);
  ASSERT_TRUE(check_chunk_header(h, chunk.size(), 0).ok());
  std::vector<Record> out;
  ASSERT_TRUE(decode_events(h, chunk.data() + sizeof h, &out).ok());
  ASSERT_EQ(out.size(), in.size());
  EXPECT_EQ(0, std::memcmp(out.data(), in.data(), in.size() * sizeof(Record)));
  EXPECT_EQ(h.rank, 3u);
  EXPECT_EQ(h.thread, 2u);
}

// The on-disk layout of an events payload, written the slow, obvious way: byte j of record i at
// j * n + i, times delta-encoded. The codec's vectorized shuffle must produce exactly this.
std::string reference_shuffle(const std::vector<Record>& in) {
  const size_t n = in.size();
  std::string out(n * sizeof(Record), '\0');
  uint64_t prev = 0;
  for (size_t i = 0; i < n; ++i) {
    Record r = in[i];
    r.time -= prev;
    prev = in[i].time;
    unsigned char b[sizeof(Record)];
    std::memcpy(b, &r, sizeof r);
    for (size_t j = 0; j < sizeof(Record); ++j) out[j * n + i] = static_cast<char>(b[j]);
  }
  return out;
}

// Encodes `in` as one chunk and checks it: the payload decodes to the format's byte layout
// (reference_shuffle), which the SSE2 shuffle a CPU without AVX2 takes writes too, and to the
// records. Returns the chunk.
std::string expect_round_trip(const std::vector<Record>& in) {
  const auto n = static_cast<uint32_t>(in.size());
  std::string chunk;
  encode_events(in.data(), n, 0, 0, 1, &chunk);
  ChunkHeader h;
  std::memcpy(&h, chunk.data(), sizeof h);
  EXPECT_TRUE(check_chunk_header(h, chunk.size(), 0).ok()) << "n=" << n;
  std::string raw;
  EXPECT_TRUE(decode_blob(h, chunk.data() + sizeof h, &raw).ok()) << "n=" << n;
  EXPECT_EQ(raw, reference_shuffle(in)) << "n=" << n;
  std::string narrow(raw.size(), '\0');
  shuffle_records(in.data(), n, narrow.data(), n, false);
  EXPECT_EQ(narrow, raw) << "n=" << n;
  std::vector<Record> out;
  EXPECT_TRUE(decode_events(h, chunk.data() + sizeof h, &out).ok()) << "n=" << n;
  EXPECT_TRUE(out.size() == in.size() && std::memcmp(out.data(), in.data(), in.size() * sizeof(Record)) == 0)
      << "n=" << n;
  return chunk;
}

// Whole pages of records (liblog's default buffer is 131072), where the codec pads its planes apart.
TEST(Codec, ChunksOfWholePagesOfRecordsRoundTrip) {
  std::mt19937_64 rng(11);
  for (uint32_t n : {4096u, 131072u}) {
    std::vector<Record> in;
    for (uint32_t i = 0; i < n; ++i)
      in.push_back(rec(static_cast<RecordKind>(1 + rng() % 8), i * 300 + rng() % 200, rng() % 9, 0, 1, 2,
                       rng() % 4000));
    expect_round_trip(in);
  }
}

TEST(Codec, ShuffleKeepsTheFormatsByteLayoutForEveryLength) {
  std::mt19937_64 rng(7);
  for (uint32_t n : {0u, 1u, 15u, 16u, 17u, 31u, 32u, 33u, 1000u}) {
    std::vector<Record> in;
    for (uint32_t i = 0; i < n; ++i)
      in.push_back(rec(static_cast<RecordKind>(1 + rng() % 8), rng() % 1000000, static_cast<uint16_t>(rng()),
                       static_cast<int32_t>(rng()), static_cast<int32_t>(rng()), static_cast<uint32_t>(rng()),
                       rng()));
    expect_round_trip(in);
  }
}

// Records like a loop of cheap calls: every plane constant or nearly so, but for the low bytes of
// times. A few preemptions (long gaps) and the first record's absolute time make the high bytes
// of times differ a handful of times per chunk: those planes are sparse, not varying.
std::vector<Record> cheap_calls_with_outliers(uint32_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Record> in;
  uint64_t t = 0x123456789ABCull;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t duration = 100 + rng() % 60 + (i % 64 == 63 ? 700 : 0);  // progress every 64th call
    in.push_back(rec(RecordKind::kState, t, 42, 0, 7, 0, duration));
    t += duration + 50 + rng() % 40 + (rng() % 5000 == 0 ? 3000000 : 0);  // a rare preemption
  }
  return in;
}

uint32_t sparse_mask_of(const std::string& chunk) {
  const char* payload = chunk.data() + sizeof(ChunkHeader);
  uint32_t constant_mask, sparse_mask;
  std::memcpy(&constant_mask, payload, sizeof constant_mask);
  std::memcpy(&sparse_mask, payload + 4 + __builtin_popcount(constant_mask), sizeof sparse_mask);
  return sparse_mask;
}

TEST(Codec, NearlyConstantPlanesAreSparseAndRoundTrip) {
  for (uint32_t n : {1u, 17u, 1000u, 65537u}) {
    const std::vector<Record> in = cheap_calls_with_outliers(n, n);
    const std::string chunk = expect_round_trip(in);
    ChunkHeader h;
    std::memcpy(&h, chunk.data(), sizeof h);
    EXPECT_TRUE(h.flags & kChunkSparse);
    if (n >= 1000) {
      // The time's bytes 2-5 (the first record's absolute time, and preemptions) and the
      // duration's byte 1 (the slow calls, 1 in 64) are sparse; the time's byte 0 varies.
      const uint32_t sparse = sparse_mask_of(chunk);
      EXPECT_EQ(sparse & 0x3Cu, 0x3Cu) << std::hex << sparse;
      EXPECT_TRUE(sparse & (1u << 25)) << std::hex << sparse;
      EXPECT_FALSE(sparse & 1u) << std::hex << sparse;
    }
  }
}

// The sparse limit is exact, n / 32 bytes that differ, however far apart: the count runs over
// the whole plane (in batches of 4032 bytes), not only its start.
TEST(Codec, SparseLimitHoldsAcrossAWholePlane) {
  const uint32_t n = 20000, limit = n / 32;
  for (uint32_t differing : {limit, limit + 1}) {
    std::vector<Record> in(n, rec(RecordKind::kState, 0, 42, 0, 7, 0, 100));
    for (uint32_t i = 0; i < n; ++i) in[i].time = i * 16;  // byte 0 of the time deltas: constant 16
    for (uint32_t k = 0; k < differing; ++k) in[k * 31 + 5].c = 100 + 256 * (1 + k % 3);  // spread
    const uint32_t sparse = sparse_mask_of(expect_round_trip(in));
    EXPECT_EQ((sparse >> 25) & 1, differing <= limit ? 1u : 0u) << differing << " of " << n;
  }
}

// A damaged exception list is named, whatever byte the damage hits, once the checksums are
// repaired to let it through: no crash, no write outside the plane.
TEST(Codec, DamagedSparsePlanesAreReportedNotTrusted) {
  const std::vector<Record> in = cheap_calls_with_outliers(1000, 3);
  std::string chunk;
  encode_events(in.data(), 1000, 0, 0, 1, &chunk);
  ChunkHeader h;
  std::memcpy(&h, chunk.data(), sizeof h);
  ASSERT_NE(sparse_mask_of(chunk), 0u);
  // Rewrite the payload uncompressed, so that damage reaches the exception bytes themselves.
  std::string raw_body;
  {
    const char* payload = chunk.data() + sizeof h;
    uint32_t constant_mask;
    std::memcpy(&constant_mask, payload, 4);
    const size_t nconstant = static_cast<size_t>(__builtin_popcount(constant_mask));
    uint32_t sparse_mask;
    std::memcpy(&sparse_mask, payload + 4 + nconstant, 4);
    const size_t head = 4 + nconstant + 4 + 5 * static_cast<size_t>(__builtin_popcount(sparse_mask)) + 4;
    std::string body(64 * 1024, '\0');
    const size_t got = ZSTD_decompress(body.data(), body.size(), payload + head, h.payload_size - head);
    ASSERT_FALSE(ZSTD_isError(got));
    body.resize(got);
    raw_body = std::string(payload, head) + body;
  }
  h.flags = static_cast<uint16_t>(h.flags & ~kChunkZstd);
  int reported = 0, intact = 0;
  for (size_t at = 0; at < raw_body.size(); ++at) {
    for (unsigned char x : {0x01, 0x80, 0xFF}) {
      std::string damaged = raw_body;
      damaged[at] = static_cast<char>(damaged[at] ^ x);
      ChunkHeader d = h;
      d.payload_size = static_cast<uint32_t>(damaged.size());
      d.payload_hash = hash64(damaged.data(), damaged.size());
      seal(&d);
      std::vector<Record> out;
      const mpe::Status s = decode_events(d, damaged.data(), &out);
      if (!s.ok()) {
        ++reported;
        EXPECT_EQ(s.code(), mpe::StatusCode::kCorrupt) << s.to_string();
      } else {
        ++intact;
        ASSERT_EQ(out.size(), in.size());  // a changed value decodes to a changed record, in bounds
      }
    }
  }
  EXPECT_GT(reported, 0);
  EXPECT_GT(intact, 0);
}

TEST(Codec, PingPongRecordsCompressWell) {
  std::vector<Record> in;
  uint64_t t = 1000000;
  for (int i = 0; i < 20000; ++i) {
    in.push_back(rec(RecordKind::kState, t, 0, 0, 0, 0, 300 + (i % 3)));
    in.push_back(rec(RecordKind::kSend, t + 5, 0, 1, 1, 0, 8));
    t += 1100 + (i % 5);
  }
  std::string chunk;
  encode_events(in.data(), static_cast<uint32_t>(in.size()), 0, 0, 1, &chunk);
  EXPECT_LT(chunk.size(), in.size() * 4);  // < 8 B per call (two records per call)
}

TEST(Codec, RawChunkDecodes) {
  std::vector<Record> in = {rec(RecordKind::kMarker, 5, 0, 1, 1), rec(RecordKind::kState, 7, 3, 0, 0, 0, 9)};
  char buf[1024];
  const size_t n = encode_events_raw(in.data(), 2, 0, 1, buf, sizeof buf);
  ASSERT_GT(n, 0u);
  ChunkHeader h;
  std::memcpy(&h, buf, sizeof h);
  ASSERT_TRUE(check_chunk_header(h, n, 0).ok());
  std::vector<Record> out;
  ASSERT_TRUE(decode_events(h, buf + sizeof h, &out).ok());
  EXPECT_EQ(out[1].c, 9u);
  EXPECT_EQ(h.t_last, 16u);
}

TEST(Reader, RoundTripMatchesMessagesAndPairsUserStates) {
  const std::string path = temp_path("roundtrip");
  ASSERT_TRUE(write_two_rank_log(path).ok());
  auto f = LogFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->definitions().world_size, 2u);
  ASSERT_EQ(f->index().size(), 2u);
  EXPECT_EQ(f->category_name(2), "MPI_Barrier");
  EXPECT_EQ(f->index()[0].summary[0].cat, 0u);
  EXPECT_EQ(f->index()[0].summary[0].count, 3u);
  auto tr = load_trace(*f);
  ASSERT_TRUE(tr.ok()) << tr.status().to_string();
  EXPECT_EQ(tr->messages.size(), 3u);
  EXPECT_EQ(tr->unmatched_sends, 0u);
  EXPECT_EQ(tr->unmatched_recvs, 0u);
  EXPECT_EQ(tr->backward_messages, 0u);
  ASSERT_EQ(tr->timelines.size(), 2u);
  EXPECT_EQ(tr->messages[0].src, 0);
  EXPECT_EQ(tr->messages[0].dst, 1);
  EXPECT_EQ(tr->messages[0].recv_time - tr->messages[0].send_time, 40);
  const Timeline& t1 = tr->timelines[1];
  int user = 0;
  for (const auto& s : t1.states)
    if (s.cat == kUserCategoryBase) {
      ++user;
      EXPECT_EQ(s.end - s.start, 100);
    }
  EXPECT_EQ(user, 1);
  EXPECT_EQ(f->category(kUserCategoryBase)->color, 0xFF0000u);
  std::remove(path.c_str());
}

TEST(Reader, RepairsBackwardMessagesByShiftingRanks) {
  const std::string path = temp_path("backward");
  LogWriter w;
  ASSERT_TRUE(w.open(path).ok());
  // Rank 0 sends at 1000 and 3000; rank 1 receives at 900 (before the send) and 3100.
  std::vector<Record> r0 = {rec(RecordKind::kSend, 1000, 0, 1, 5, 0, 8),
                            rec(RecordKind::kSend, 3000, 0, 1, 5, 0, 8)};
  std::vector<Record> r1 = {rec(RecordKind::kRecv, 900, 1, 0, 5, 0, 8),
                            rec(RecordKind::kRecv, 3100, 1, 0, 5, 0, 8)};
  std::string c0, c1;
  encode_events(r0.data(), 2, 0, 0, 1, &c0);
  encode_events(r1.data(), 2, 1, 0, 1, &c1);
  ASSERT_TRUE(w.add_events_chunk(c0).ok());
  ASSERT_TRUE(w.add_events_chunk(c1).ok());
  ASSERT_TRUE(w.finish(two_rank_defs()).ok());
  auto f = LogFile::open(path);
  ASSERT_TRUE(f.ok());
  auto tr = load_trace(*f);
  ASSERT_TRUE(tr.ok());
  EXPECT_EQ(tr->backward_messages, 0u);
  ASSERT_EQ(tr->causality_shift_ns.size(), 2u);
  EXPECT_EQ(tr->causality_shift_ns[0], 0);
  EXPECT_EQ(tr->causality_shift_ns[1], 101);
  for (const auto& m : tr->messages) EXPECT_GE(m.recv_time, m.send_time);
  std::remove(path.c_str());
}

TEST(Reader, AppliesClockCorrectionWithDrift) {
  ClockSync s;
  s.valid = 3;
  s.t_init = 1000;
  s.offset_init = 10;
  s.t_final = 2000;
  s.offset_final = 30;
  EXPECT_DOUBLE_EQ(s.correct(1000), 1010);
  EXPECT_DOUBLE_EQ(s.correct(1500), 1520);
  EXPECT_DOUBLE_EQ(s.correct(2000), 2030);
}

// The reader's inline rounding of times is std::llround, value for value: halves, the largest
// doubles below a half, negative values, whole numbers past 2^52, and values out of range.
TEST(Reader, RoundsTimesAsLlround) {
  std::vector<double> values = {0.0,
                                -0.0,
                                0.5,
                                -0.5,
                                1.5,
                                2.5,
                                -2.5,
                                0.49999999999999994,
                                -0.49999999999999994,
                                4503599627370495.5,
                                4503599627370497.0,
                                9007199254740993.0,
                                -9007199254740993.0,
                                1e18 + 0.5,
                                -1e18,
                                9.2e18 - 4096,
                                -9.2e18 + 4096};
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> spread(-1e13, 1e13);
  for (int i = 0; i < 100000; ++i) values.push_back(spread(random));
  for (int i = 0; i < 1000; ++i) values.push_back(std::floor(spread(random)) + 0.5);
  for (double v : values) EXPECT_EQ(round_to_int64(v), std::llround(v)) << v;
}

TEST(Reader, RejectsNonLogfile) {
  const std::string p = temp_path("notlog");
  spit(p, "hello, this is not a logfile at all, really not");
  auto f = LogFile::open(p);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), mpe::StatusCode::kNotALogfile);
  std::remove(p.c_str());
}

TEST(Reader, RejectsNewerVersion) {
  const std::string path = temp_path("newer");
  ASSERT_TRUE(write_two_rank_log(path).ok());
  std::string s = slurp(path);
  FileHeader h;
  std::memcpy(&h, s.data(), sizeof h);
  h.version = kCurrentVersion + 1;
  seal(&h);
  std::memcpy(s.data(), &h, sizeof h);
  spit(path, s);
  auto f = LogFile::open(path);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), mpe::StatusCode::kUnsupportedVersion);
  std::remove(path.c_str());
}

TEST(Reader, ReportsTruncation) {
  const std::string path = temp_path("trunc");
  ASSERT_TRUE(write_two_rank_log(path).ok());
  const std::string s = slurp(path);
  spit(path, s.substr(0, s.size() - 10));
  auto f = LogFile::open(path);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), mpe::StatusCode::kTruncated);
  EXPECT_NE(f.status().message().find("recover"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Reader, ReportsCorruptChunkPayload) {
  const std::string path = temp_path("corrupt");
  ASSERT_TRUE(write_two_rank_log(path).ok());
  std::string s = slurp(path);
  s[sizeof(FileHeader) + sizeof(ChunkHeader) + 3] ^= 0x55;
  spit(path, s);
  auto f = LogFile::open(path);
  ASSERT_TRUE(f.ok());
  auto tr = load_trace(*f);
  ASSERT_FALSE(tr.ok());
  EXPECT_EQ(tr.status().code(), mpe::StatusCode::kCorrupt);
  EXPECT_NE(tr.status().message().find("checksum"), std::string::npos);
  std::remove(path.c_str());
}

namespace {

// Everything a logfile holds, read the way a front end reads it: every chunk, then the model.
struct ReadBack {
  std::vector<std::vector<Record>> chunks;
  Trace trace;
};

mpe::Status read_fully(const std::string& path, ReadBack* out) {
  auto f = LogFile::open(path);
  if (!f.ok()) return f.status();
  out->chunks.clear();
  for (size_t i = 0; i < f->index().size(); ++i) {
    auto c = f->read_chunk(i);
    if (!c.ok()) return c.status();
    out->chunks.push_back(std::move(*c));
  }
  auto tr = load_trace(*f);
  if (!tr.ok()) return tr.status();
  out->trace = std::move(*tr);
  return {};
}

bool is_damage_code(mpe::StatusCode c) {
  using mpe::StatusCode;
  return c == StatusCode::kNotALogfile || c == StatusCode::kUnsupportedVersion || c == StatusCode::kCorrupt ||
         c == StatusCode::kTruncated;
}

}  // namespace

// Overwrites and cuts bytes at random. Every damaged file must either be rejected with a status
// that names the damage, or read back exactly as written: the same records in every chunk and
// the same model (a byte overwritten with its own value leaves the file unchanged).
TEST(Reader, RejectsRandomDamageOrReadsItBackUnchanged) {
  const std::string path = temp_path("fuzz");
  ASSERT_TRUE(write_two_rank_log(path).ok());
  const std::string good = slurp(path);
  ReadBack want;
  ASSERT_TRUE(read_fully(path, &want).ok());
  ASSERT_FALSE(want.chunks.empty());
  std::mt19937 rng(42);
  int rejected = 0;
  for (int i = 0; i < 400; ++i) {
    std::string s = good;
    const bool truncated = i % 3 == 0;
    if (truncated) {
      s.resize(rng() % s.size());
    } else {
      for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k)
        s[rng() % s.size()] = static_cast<char>(rng());
    }
    spit(path, s);
    ReadBack got;
    const mpe::Status st = read_fully(path, &got);
    if (!st.ok()) {
      ASSERT_TRUE(is_damage_code(st.code())) << "damage " << i << ": " << st.to_string();
      ++rejected;
      continue;
    }
    ASSERT_FALSE(truncated) << "damage " << i << ": a file cut to " << s.size() << " bytes was accepted";
    ASSERT_TRUE(s == good) << "damage " << i << ": changed bytes went undetected";
    ASSERT_EQ(got.chunks.size(), want.chunks.size()) << "damage " << i;
    for (size_t c = 0; c < want.chunks.size(); ++c) {
      ASSERT_EQ(got.chunks[c].size(), want.chunks[c].size()) << "damage " << i << ", chunk " << c;
      const size_t bytes = want.chunks[c].size() * sizeof(Record);
      EXPECT_EQ(0, std::memcmp(got.chunks[c].data(), want.chunks[c].data(), bytes))
          << "damage " << i << ", chunk " << c;
    }
    EXPECT_EQ(got.trace.records, want.trace.records) << "damage " << i;
    EXPECT_EQ(got.trace.messages.size(), want.trace.messages.size()) << "damage " << i;
    EXPECT_EQ(got.trace.timelines.size(), want.trace.timelines.size()) << "damage " << i;
  }
  EXPECT_GT(rejected, 300);  // nearly every damage changes bytes
  std::remove(path.c_str());
}

// A spill file of rank r of a run of `size` ranks of `program`: definitions, rank meta, two
// events chunks of one record each.
std::string part_bytes(uint32_t r, uint32_t size, const std::string& program = "prog") {
  Definitions base = two_rank_defs();
  base.ranks.clear();
  base.world_size = 0;
  base.program = program;
  std::string s = build_part_header(r, size, 1e9);
  encode_blob(ChunkKind::kDefinitions, r, serialize_definitions(base), &s);
  encode_blob(ChunkKind::kRankMeta, r, serialize_rank_meta(two_rank_defs().ranks[r % 2]), &s);
  std::vector<Record> recs = {rec(RecordKind::kState, 100, 2, 0, 0, 0, 10)};
  encode_events(recs.data(), 1, r, 0, 1, &s);
  encode_events(recs.data(), 1, r, 0, 1, &s);
  return s;
}

TEST(Recover, BuildsLogfileFromPartsAndKeepsChunksBeforeDamage) {
  std::vector<std::string> parts;
  for (uint32_t r = 0; r < 2; ++r) {
    std::string s = part_bytes(r, 2);
    if (r == 1) s.resize(s.size() - 5);  // killed while writing its last chunk
    parts.push_back(temp_path("part" + std::to_string(r)));
    spit(parts.back(), s);
  }
  const std::string out = temp_path("recovered.mpelog");
  RecoverReport rep;
  auto st = recover(parts, out, &rep);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(rep.chunks, 3u);
  EXPECT_EQ(rep.ranks, 2);
  auto f = LogFile::open(out);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_TRUE(f->definitions().recovered);
  auto tr = load_trace(*f);
  ASSERT_TRUE(tr.ok());
  EXPECT_EQ(tr->records, 3u);
  for (auto& p : parts) std::remove(p.c_str());
  std::remove(out.c_str());
}

TEST(Recover, RefusesPartsOfAnotherRunAndLeavesNoFile) {
  struct Case {
    const char* what;
    std::string second;  // the part given after rank 0's of a 2-rank run of "prog"
    const char* message;
  };
  const Case cases[] = {{"world size", part_bytes(1, 3), "run of 3 ranks"},
                        {"program", part_bytes(1, 2, "other"), "of program 'other'"},
                        {"same rank twice", part_bytes(0, 2), "rank 0 has two spill files"}};
  const std::string first = temp_path("run_part0");
  spit(first, part_bytes(0, 2));
  for (const Case& c : cases) {
    const std::string second = temp_path("run_part1");
    spit(second, c.second);
    const std::string out = temp_path("refused.mpelog");
    RecoverReport rep;
    const mpe::Status st = recover({first, second}, out, &rep);
    EXPECT_EQ(st.code(), mpe::StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(st.message().find(c.message), std::string::npos) << c.what << ": " << st.message();
    EXPECT_FALSE(std::filesystem::exists(out)) << c.what;
    EXPECT_FALSE(std::filesystem::exists(out + ".tmp")) << c.what;
    std::remove(second.c_str());
  }
  std::remove(first.c_str());
}
