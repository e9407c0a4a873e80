// Serialization of the definitions and the chunk codec (delta + byte shuffle + zstd, checksums).
#include "mpe/log_defs.h"

#include <emmintrin.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mpe::log {

uint64_t hash64(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t k;
    std::memcpy(&k, p + i, 8);
    k *= 0x87C37B91114253D5ull;
    k = (k << 31) | (k >> 33);
    h ^= k * 0x4CF5AD432745937Full;
    h = ((h << 27) | (h >> 37)) * 5 + 0x52DCE729;
  }
  uint64_t tail = 0;
  if (n > i) std::memcpy(&tail, p + i, n - i);  // not with a null p and n == 0
  h ^= tail * 0x87C37B91114253D5ull;
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h;
}

double ClockSync::correct(uint64_t t) const {
  const bool a = valid & 1, b = valid & 2;
  if (a && b && t_final > t_init) {
    const double slope =
        static_cast<double>(offset_final - offset_init) / static_cast<double>(t_final - t_init);
    return static_cast<double>(t) + static_cast<double>(offset_init) +
           slope * (static_cast<double>(t) - static_cast<double>(t_init));
  }
  if (a) return static_cast<double>(t) + static_cast<double>(offset_init);
  if (b) return static_cast<double>(t) + static_cast<double>(offset_final);
  return static_cast<double>(t);
}

namespace {

// Sanity bound on every serialized count (ranks, groups, members: up to 2^31 ranks); each count is
// also bounded by the bytes left.
constexpr uint32_t kMaxItems = 1u << 31;

Status corrupt(const std::string& what) { return Status(StatusCode::kCorrupt, what); }

void put_category(ByteWriter& w, const Category& c) {
  w.u32(c.id);
  w.u8(static_cast<uint8_t>(c.kind));
  w.u32(c.end_id);
  w.u32(c.color);
  w.str(c.name);
}

bool get_category(ByteReader& r, Category* c) {
  uint8_t kind;
  if (!r.u32(&c->id) || !r.u8(&kind) || !r.u32(&c->end_id) || !r.u32(&c->color) || !r.str(&c->name))
    return false;
  if (kind > 1) return false;
  c->kind = static_cast<CategoryKind>(kind);
  return true;
}

// Group references in the run's definitions (v5): 0 is MPI_COMM_WORLD's group, 1 the rank's own
// MPI_COMM_SELF group, k >= 2 entry k - 2 of the group table.
constexpr uint32_t kWorldGroup = 0;
constexpr uint32_t kSelfGroup = 1;
constexpr uint32_t kFirstTableGroup = 2;

// Member lists on their own (v5 rank meta; the group table): form 0 a plain list, form 1 runs of
// evenly spaced ranks {first, count, stride}, whichever is shorter.
struct MemberRun {
  int32_t first;
  uint32_t count;
  int32_t stride;
};

std::vector<MemberRun> runs_of(const std::vector<int32_t>& v) {
  std::vector<MemberRun> runs;
  for (size_t i = 0; i < v.size();) {
    MemberRun run{v[i], 1, 0};
    if (i + 1 < v.size()) {
      const int64_t stride = int64_t{v[i + 1]} - v[i];
      if (stride >= INT32_MIN && stride <= INT32_MAX) {
        run.stride = static_cast<int32_t>(stride);
        size_t j = i + 1;
        while (j < v.size() && int64_t{v[j]} - v[j - 1] == stride) ++j;
        run.count = static_cast<uint32_t>(j - i);
      }
    }
    runs.push_back(run);
    i += run.count;
  }
  return runs;
}

void put_members(ByteWriter& w, const std::vector<int32_t>& v) {
  const std::vector<MemberRun> runs = runs_of(v);
  if (runs.size() * 12 < v.size() * 4) {
    w.u8(1);
    w.u32(static_cast<uint32_t>(v.size()));
    w.u32(static_cast<uint32_t>(runs.size()));
    for (const MemberRun& run : runs) {
      w.u32(static_cast<uint32_t>(run.first));
      w.u32(run.count);
      w.u32(static_cast<uint32_t>(run.stride));
    }
  } else {
    w.u8(0);
    w.u32(static_cast<uint32_t>(v.size()));
    for (int32_t x : v) w.u32(static_cast<uint32_t>(x));
  }
}

uint64_t member_limit(uint32_t world_size) { return uint64_t{world_size} + 65536; }

// A member is a world rank, or -1 (a rank the world's group does not hold).
bool valid_member(int64_t x) { return x >= -1 && x <= INT32_MAX; }

// `limit` bounds the members (runs take 12 bytes however many ranks they hold, so the bytes left do
// not bound them): a group holds at most the world's ranks, plus ranks of spawned worlds.
bool get_members(ByteReader& r, uint64_t limit, std::vector<int32_t>* v) {
  uint8_t form;
  uint32_t n;
  if (!r.u8(&form) || form > 1) return false;
  if (form == 0) {
    if (!r.count(&n, 4) || n > limit) return false;
    v->resize(n);
    for (auto& x : *v) {
      uint32_t u;
      if (!r.u32(&u)) return false;
      x = static_cast<int32_t>(u);
    }
    return true;
  }
  uint32_t nruns;
  if (!r.u32(&n) || n > limit || !r.count(&nruns, 12) || nruns > n) return false;
  v->clear();
  v->reserve(n);
  for (uint32_t k = 0; k < nruns; ++k) {
    uint32_t first, count, stride;
    if (!r.u32(&first) || !r.u32(&count) || !r.u32(&stride) || count == 0 || count > n - v->size())
      return false;
    const int64_t a = static_cast<int32_t>(first), d = static_cast<int32_t>(stride);
    if (!valid_member(a) || !valid_member(a + d * (int64_t{count} - 1))) return false;
    for (uint32_t i = 0; i < count; ++i) v->push_back(static_cast<int32_t>(a + d * i));
  }
  return v->size() == n;
}

// The run's distinct groups, numbered as they are first met (serialize_definitions).
class GroupTable {
 public:
  explicit GroupTable(uint32_t world_size) : world_size_(world_size) {}
  // The reference of a rank's group: world, self, or a table entry (added when new).
  uint32_t ref(const MemberList& m, uint32_t rank) {
    const std::vector<int32_t>& v = m.vector();
    if (v.size() == 1 && v[0] == static_cast<int32_t>(rank)) return kSelfGroup;
    // Interned lists are one copy: most lookups stop here without reading the members.
    if (auto it = by_copy_.find(&v); it != by_copy_.end()) return it->second;
    uint32_t id;
    if (is_world(v)) {
      id = kWorldGroup;
    } else {
      const uint64_t h = hash64(v.data(), v.size() * sizeof(int32_t));
      id = 0;
      for (auto [it, end] = by_hash_.equal_range(h); it != end; ++it)
        if (*groups_[it->second - kFirstTableGroup] == v) id = it->second;
      if (id == 0) {
        id = kFirstTableGroup + static_cast<uint32_t>(groups_.size());
        groups_.push_back(&v);
        by_hash_.emplace(h, id);
      }
    }
    by_copy_.emplace(&v, id);
    return id;
  }
  const std::vector<const std::vector<int32_t>*>& groups() const { return groups_; }

 private:
  bool is_world(const std::vector<int32_t>& v) const {
    if (v.size() != world_size_) return false;
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] != static_cast<int32_t>(i)) return false;
    return true;
  }
  uint32_t world_size_;
  std::vector<const std::vector<int32_t>*> groups_;
  std::unordered_map<const std::vector<int32_t>*, uint32_t> by_copy_;
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;
};

// How a rank's communicators name their groups when read: inline lists (spill files, and every
// version before 5), or references into the run's group table (definitions, v5).
struct GroupSource {
  MemberInterner* interner = nullptr;              // inline lists: shares equal ones (may be null)
  const std::vector<MemberList>* table = nullptr;  // references: entries kFirstTableGroup..
  MemberList world;                                // references: group kWorldGroup
};

void put_rank(ByteWriter& w, const RankMeta& m, GroupTable* groups) {
  w.u32(m.rank);
  w.u32(m.world_size);
  w.i64(m.pid);
  w.str(m.host);
  w.f64(m.ticks_per_second);
  w.u8(m.logging_at_start ? 1 : 0);
  w.u8(m.sync.valid);
  w.u64(m.sync.t_init);
  w.i64(m.sync.offset_init);
  w.u64(m.sync.rtt_init);
  w.u64(m.sync.t_final);
  w.i64(m.sync.offset_final);
  w.u64(m.sync.rtt_final);
  w.u32(static_cast<uint32_t>(m.threads.size()));
  for (const auto& t : m.threads) {
    w.u32(t.index);
    w.i64(t.tid);
  }
  w.u32(static_cast<uint32_t>(m.comms.size()));
  for (const auto& c : m.comms) {
    w.u32(c.index);
    w.u64(c.global_id);
    w.u8(c.inter ? 1 : 0);
    if (groups)
      w.u32(groups->ref(c.members, m.rank));
    else
      put_members(w, c.members.vector());
  }
  w.u32(static_cast<uint32_t>(m.user_categories.size()));
  for (const auto& c : m.user_categories) put_category(w, c);
  w.u32(static_cast<uint32_t>(m.callsites.size()));
  for (const auto& site : m.callsites) {
    w.u32(site.id);
    w.u32(static_cast<uint32_t>(site.frames.size()));
    for (const Frame& f : site.frames) {
      w.str(f.function);
      w.str(f.file);
      w.u32(static_cast<uint32_t>(f.line));
      w.str(f.module);
      w.u64(f.offset);
    }
  }
  w.u32(static_cast<uint32_t>(m.counters.size()));  // v4
  for (const auto& k : m.counters) {
    w.u32(k.id);
    w.str(k.name);
    w.str(k.description);
    w.str(k.datatype);
    w.u8(static_cast<uint8_t>(k.cls));
    w.u8(static_cast<uint8_t>(k.semantics));
    w.u8(static_cast<uint8_t>(k.kind));
    w.u8(k.per_comm ? 1 : 0);
  }
}

// A counter definition (v4); false on a value out of its range.
bool get_counter(ByteReader& r, CounterDef* k) {
  uint8_t cls, semantics, kind, per_comm;
  if (!r.u32(&k->id) || !r.str(&k->name) || !r.str(&k->description) || !r.str(&k->datatype) || !r.u8(&cls) ||
      !r.u8(&semantics) || !r.u8(&kind) || !r.u8(&per_comm))
    return false;
  if (cls >= kPvarClassCount || semantics > 2 || kind > 2 || per_comm > 1) return false;
  k->cls = static_cast<PvarClass>(cls);
  k->semantics = static_cast<PvarSemantics>(semantics);
  k->kind = static_cast<PvarValueKind>(kind);
  k->per_comm = per_comm != 0;
  return true;
}

bool get_count(ByteReader& r, uint32_t* n, size_t min_item_bytes) {
  return r.count(n, min_item_bytes) && *n <= kMaxItems;
}

bool get_frame(ByteReader& r, Frame* f) {
  uint32_t line;
  uint64_t offset;
  if (!r.str(&f->function) || !r.str(&f->file) || !r.u32(&line) || !r.str(&f->module) || !r.u64(&offset))
    return false;
  f->line = static_cast<int>(line);
  f->offset = static_cast<uintptr_t>(offset);
  return true;
}

bool get_rank(ByteReader& r, RankMeta* m, uint16_t version, const GroupSource& groups) {
  uint8_t flag;
  uint32_t n;
  if (!r.u32(&m->rank) || !r.u32(&m->world_size) || !r.i64(&m->pid) || !r.str(&m->host) ||
      !r.f64(&m->ticks_per_second) || !r.u8(&flag))
    return false;
  if (!(m->ticks_per_second > 0) || !std::isfinite(m->ticks_per_second)) return false;
  m->logging_at_start = flag != 0;
  if (!r.u8(&m->sync.valid) || !r.u64(&m->sync.t_init) || !r.i64(&m->sync.offset_init) ||
      !r.u64(&m->sync.rtt_init) || !r.u64(&m->sync.t_final) || !r.i64(&m->sync.offset_final) ||
      !r.u64(&m->sync.rtt_final))
    return false;
  if (!get_count(r, &n, 12)) return false;
  m->threads.resize(n);
  for (auto& t : m->threads)
    if (!r.u32(&t.index) || !r.i64(&t.tid)) return false;
  if (!get_count(r, &n, 17)) return false;
  m->comms.resize(n);
  std::vector<int32_t> members;
  for (auto& c : m->comms) {
    uint8_t inter;
    if (!r.u32(&c.index) || !r.u64(&c.global_id) || !r.u8(&inter) || inter > 1) return false;
    c.inter = inter != 0;
    if (groups.table) {  // a reference into the run's group table (v5 definitions)
      uint32_t ref;
      if (!r.u32(&ref)) return false;
      if (ref == kWorldGroup) {
        c.members = groups.world;
      } else if (ref == kSelfGroup) {
        c.members = MemberList{static_cast<int32_t>(m->rank)};
      } else {
        if (ref - kFirstTableGroup >= groups.table->size()) return false;
        c.members = (*groups.table)[ref - kFirstTableGroup];
      }
      continue;
    }
    if (version >= kFirstGroupTableVersion) {
      if (!get_members(r, member_limit(m->world_size), &members)) return false;
    } else {  // before v5: a plain list
      uint32_t k;
      if (!get_count(r, &k, 4)) return false;
      members.resize(k);
      for (auto& x : members) {
        uint32_t v;
        if (!r.u32(&v)) return false;
        x = static_cast<int32_t>(v);
      }
    }
    c.members =
        groups.interner ? groups.interner->intern(std::move(members)) : MemberList(std::move(members));
    members = {};
  }
  if (!get_count(r, &n, 17)) return false;
  m->user_categories.resize(n);
  for (auto& c : m->user_categories)
    if (!get_category(r, &c)) return false;
  if (version < kFirstCallsiteVersion) return true;
  if (!get_count(r, &n, 8)) return false;
  m->callsites.resize(n);
  for (auto& site : m->callsites) {
    uint32_t k;
    if (!r.u32(&site.id) || site.id == 0 || site.id > n || !get_count(r, &k, 24)) return false;  // ids 1..n
    site.frames.resize(k);
    for (auto& f : site.frames)
      if (!get_frame(r, &f)) return false;
  }
  if (version < kFirstCounterVersion) return true;
  if (!get_count(r, &n, 12)) return false;
  m->counters.resize(n);
  for (uint32_t i = 0; i < n; ++i)  // ids 0..n-1, in order: a record's cat indexes the list
    if (!get_counter(r, &m->counters[i]) || m->counters[i].id != i) return false;
  return true;
}

// Transposes a 16x16 byte matrix in place: afterwards x[j] byte i is the former x[i] byte j.
// Interleaving row i with row i+8 byte by byte, four times over, rotates the four row-index
// bits into the column index: 64 SSE2 unpacks in all (SSE2 is part of x86-64, so no dispatch).
inline void interleave_halves(const __m128i in[16], __m128i out[16]) {
  for (int i = 0; i < 8; ++i) {
    out[2 * i] = _mm_unpacklo_epi8(in[i], in[i + 8]);
    out[2 * i + 1] = _mm_unpackhi_epi8(in[i], in[i + 8]);
  }
}
inline void transpose16(__m128i x[16]) {
  __m128i y[16];  // the rounds alternate between x and y rather than copying back
  interleave_halves(x, y);
  interleave_halves(y, x);
  interleave_halves(x, y);
  interleave_halves(y, x);
}

// Byte-shuffles records (byte j of every record together, streams n bytes apart) with
// delta-encoded times, 16 records at a time: each half of the 32-byte records is one 16x16
// byte transpose. ~12 instructions per record (the scalar 8x8 version took 179, callgrind).
void shuffle(const Record* in, uint32_t n, char* out) {
  uint64_t prev = 0;
  uint32_t i0 = 0;
  for (; i0 + 16 <= n; i0 += 16) {
    __m128i lo[16], hi[16];
    for (int k = 0; k < 16; ++k) {
      const auto* p = reinterpret_cast<const __m128i*>(&in[i0 + k]);
      // The time is the low 8 bytes; subtracting in the low lane only delta-encodes it. Wraps for
      // negative deltas (nested states), undone by the same wrap on decode.
      lo[k] = _mm_sub_epi64(_mm_loadu_si128(p), _mm_cvtsi64_si128(static_cast<long long>(prev)));
      hi[k] = _mm_loadu_si128(p + 1);
      prev = in[i0 + k].time;
    }
    transpose16(lo);
    transpose16(hi);
    for (int j = 0; j < 16; ++j) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + static_cast<size_t>(j) * n + i0), lo[j]);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + static_cast<size_t>(j + 16) * n + i0), hi[j]);
    }
  }
  for (; i0 < n; ++i0) {
    Record r = in[i0];
    const uint64_t t = r.time;
    r.time = t - prev;
    prev = t;
    unsigned char b[sizeof(Record)];
    std::memcpy(b, &r, sizeof r);
    for (size_t j = 0; j < sizeof(Record); ++j) out[j * n + i0] = static_cast<char>(b[j]);
  }
}

// The inverse of shuffle(): the same transposes (a transpose is its own inverse), then the
// running sum of the time deltas.
void unshuffle(const char* in, uint32_t n, Record* out) {
  uint64_t prev = 0;
  uint32_t i0 = 0;
  for (; i0 + 16 <= n; i0 += 16) {
    __m128i lo[16], hi[16];
    for (int j = 0; j < 16; ++j) {
      lo[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + static_cast<size_t>(j) * n + i0));
      hi[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + static_cast<size_t>(j + 16) * n + i0));
    }
    transpose16(lo);
    transpose16(hi);
    for (int k = 0; k < 16; ++k) {
      auto* p = reinterpret_cast<__m128i*>(&out[i0 + k]);
      _mm_storeu_si128(p, lo[k]);
      _mm_storeu_si128(p + 1, hi[k]);
      out[i0 + k].time += prev;
      prev = out[i0 + k].time;
    }
  }
  for (; i0 < n; ++i0) {
    unsigned char b[sizeof(Record)];
    for (size_t j = 0; j < sizeof(Record); ++j) b[j] = static_cast<unsigned char>(in[j * n + i0]);
    std::memcpy(&out[i0], b, sizeof(Record));
    out[i0].time += prev;
    prev = out[i0].time;
  }
}

void fill_range_and_summary(const Record* r, uint32_t n, ChunkHeader* h) {
  h->t_first = n ? UINT64_MAX : 0;
  h->t_last = 0;
  // By category, reused across chunks: only the touched entries are read back and cleared, so a
  // small chunk does not pay for zeroing all 64 Ki entries.
  static thread_local std::vector<CategoryTime> acc(0x10000, CategoryTime{0, 0, 0});
  std::vector<CategoryTime> v;
  for (uint32_t i = 0; i < n; ++i) {
    h->t_first = std::min(h->t_first, r[i].time);
    uint64_t end = r[i].time;
    if (r[i].kind == static_cast<uint8_t>(RecordKind::kState)) {
      end += r[i].c;
      if (r[i].a == 0) {
        CategoryTime& ct = acc[r[i].cat];
        if (ct.count++ == 0) v.push_back(CategoryTime{r[i].cat, 0, 0});
        ct.ticks += r[i].c;
      }
    }
    h->t_last = std::max(h->t_last, end);
  }
  for (auto& ct : v) {
    ct.count = acc[ct.cat].count;
    ct.ticks = acc[ct.cat].ticks;
    acc[ct.cat] = CategoryTime{0, 0, 0};
  }
  std::sort(v.begin(), v.end(), [](const CategoryTime& a, const CategoryTime& b) {
    return a.ticks != b.ticks ? a.ticks > b.ticks : a.cat < b.cat;
  });
  for (int s = 0; s < kSummarySlots; ++s) {
    if (s < static_cast<int>(v.size()))
      h->summary[s] = v[s];
    else
      h->summary[s] = CategoryTime{0xFFFFFFFFu, 0, 0};
  }
}

}  // namespace

void seal(ChunkHeader* h) { h->header_hash = hash64(h, offsetof(ChunkHeader, header_hash)); }
void seal(FileHeader* h) { h->header_hash = hash64(h, offsetof(FileHeader, header_hash)); }
void seal(Footer* f) { f->footer_hash = hash64(f, offsetof(Footer, footer_hash)); }
void seal(PartHeader* h) { h->header_hash = hash64(h, offsetof(PartHeader, header_hash)); }

MemberList MemberInterner::intern(std::vector<int32_t> members) {
  const uint64_t h = hash64(members.data(), members.size() * sizeof(int32_t));
  for (auto [it, end] = by_hash_.equal_range(h); it != end; ++it)
    if (it->second == members) return it->second;
  MemberList list(std::move(members));
  by_hash_.emplace(h, list);
  return list;
}

MemberList MemberInterner::world(uint32_t world_size) {
  std::vector<int32_t> v(world_size);
  for (uint32_t i = 0; i < world_size; ++i) v[i] = static_cast<int32_t>(i);
  return intern(std::move(v));
}

std::string serialize_rank_meta(const RankMeta& m) {
  ByteWriter w;
  put_rank(w, m, nullptr);
  return std::move(w.data());
}

Status parse_rank_meta(const char* p, size_t n, RankMeta* out, uint16_t version, MemberInterner* interner) {
  ByteReader r(p, n);
  if (!get_rank(r, out, version, GroupSource{interner, nullptr, {}}))
    return corrupt("rank definitions are malformed");
  return Status();
}

std::string serialize_definitions(const Definitions& d) {
  ByteWriter w;
  w.u32(d.world_size);
  w.str(d.program);
  w.str(d.clock);
  w.f64(d.ticks_per_second);
  w.u8(d.recovered ? 1 : 0);
  w.u32(static_cast<uint32_t>(d.categories.size()));
  for (const auto& c : d.categories) put_category(w, c);
  // The ranks go to a buffer of their own first: writing them finds the distinct groups, and the
  // group table goes ahead of them.
  GroupTable groups(d.world_size);
  ByteWriter ranks;
  ranks.u32(static_cast<uint32_t>(d.ranks.size()));
  for (const auto& m : d.ranks) put_rank(ranks, m, &groups);
  w.u32(static_cast<uint32_t>(groups.groups().size()));
  for (const std::vector<int32_t>* g : groups.groups()) put_members(w, *g);
  w.raw(ranks.data().data(), ranks.data().size());
  return std::move(w.data());
}

Status parse_definitions(const char* p, size_t n, Definitions* out, uint16_t version) {
  ByteReader r(p, n);
  uint8_t rec;
  uint32_t k;
  if (!r.u32(&out->world_size) || !r.str(&out->program) || !r.str(&out->clock) ||
      !r.f64(&out->ticks_per_second) || !r.u8(&rec) || !get_count(r, &k, 17))
    return corrupt("definitions header is malformed");
  if (!(out->ticks_per_second > 0) || !std::isfinite(out->ticks_per_second))
    return corrupt("definitions give a bad clock rate");
  out->recovered = rec != 0;
  out->categories.resize(k);
  for (auto& c : out->categories)
    if (!get_category(r, &c)) return corrupt("a category definition is malformed");
  MemberInterner interner;
  GroupSource groups{&interner, nullptr, {}};
  std::vector<MemberList> table;
  if (version >= kFirstGroupTableVersion) {
    // Every rank takes 40 bytes or more after the groups: a world size the bytes cannot hold is
    // corrupt before any group is expanded.
    if (uint64_t{out->world_size} * 40 > r.left()) return corrupt("world size exceeds the definitions");
    if (!get_count(r, &k, 9)) return corrupt("group count is malformed");
    table.resize(k);
    std::vector<int32_t> members;
    for (auto& g : table) {
      if (!get_members(r, member_limit(out->world_size), &members))
        return corrupt("a group definition is malformed");
      out->storage.members += members.size();
      g = MemberList(std::move(members));
      members = {};
    }
    out->storage.groups = table.size();
    groups = GroupSource{nullptr, &table, interner.world(out->world_size)};
  }
  if (!get_count(r, &k, 40)) return corrupt("rank count is malformed");
  out->ranks.resize(k);
  for (auto& m : out->ranks)
    if (!get_rank(r, &m, version, groups)) return corrupt("rank definitions are malformed");
  for (size_t i = 0; i < out->ranks.size(); ++i)
    if (out->ranks[i].rank != i) return corrupt("rank definitions are out of order");
  if (version < kFirstGroupTableVersion)  // every rank's lists were stored inline
    for (const RankMeta& m : out->ranks)
      for (const CommDef& c : m.comms) {
        ++out->storage.groups;
        out->storage.members += c.members.size();
      }
  if (out->world_size != out->ranks.size()) return corrupt("world size does not match the rank definitions");
  return Status();
}

namespace {

// True when all n bytes equal the first; 16 at a time (~0.3 instructions per byte).
bool is_constant(const char* p, uint32_t n) {
  const __m128i first = _mm_set1_epi8(p[0]);
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16)
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), first)) !=
        0xFFFF)
      return false;
  for (; i < n; ++i)
    if (p[i] != p[0]) return false;
  return true;
}

// Splits the 32 byte planes of a shuffled buffer into constant ones (all n bytes equal: most
// planes of a run of similar records) and varying ones. Writes the plane header (mask, then one
// byte per constant plane) to `head` and the varying planes, back to back, to `varying`.
// Why: zstd then sees only the bytes that carry information, typically 4-8 planes of 32, which
// cuts its time per record several-fold at no cost in size.
void split_planes(const char* shuffled, uint32_t n, std::string* head, std::string* varying) {
  uint32_t mask = 0;
  std::string constants;
  varying->clear();
  for (uint32_t j = 0; j < kRecordPlanes; ++j) {
    const char* plane = shuffled + static_cast<size_t>(j) * n;
    if (is_constant(plane, n)) {
      mask |= 1u << j;
      constants.push_back(plane[0]);
    } else {
      varying->append(plane, n);
    }
  }
  head->assign(reinterpret_cast<const char*>(&mask), sizeof mask);
  head->append(constants);
}

}  // namespace

void encode_events(const Record* records, uint32_t n, uint32_t rank, uint32_t thread, int zstd_level,
                   std::string* out) {
  ChunkHeader h{};
  h.magic = kChunkMagic;
  h.kind = static_cast<uint16_t>(ChunkKind::kEvents);
  h.flags = kChunkZstd | kChunkShuffled | (n ? kChunkPlanes : 0);
  h.rank = rank;
  h.thread = thread;
  h.nrecords = n;
  h.raw_size = n * static_cast<uint32_t>(sizeof(Record));
  fill_range_and_summary(records, n, &h);
  // Reused per thread: fresh multi-MiB buffers per chunk cost page faults.
  static thread_local std::string raw, head, varying, packed;
  raw.resize(h.raw_size);
  shuffle(records, n, raw.data());
  const std::string* body = &raw;
  head.clear();
  if (h.flags & kChunkPlanes) {
    split_planes(raw.data(), n, &head, &varying);
    body = &varying;
  }
  packed.resize(ZSTD_compressBound(body->size()));
  static thread_local ZSTD_CCtx* cctx = ZSTD_createCCtx();
  const size_t csize =
      cctx ? ZSTD_compressCCtx(cctx, packed.data(), packed.size(), body->data(), body->size(), zstd_level)
           : ZSTD_compress(packed.data(), packed.size(), body->data(), body->size(), zstd_level);
  const size_t base = out->size();
  out->resize(base + sizeof(ChunkHeader));
  out->append(head);
  if (ZSTD_isError(csize)) {  // cannot happen with a bound-sized buffer; store uncompressed then
    h.flags &= static_cast<uint16_t>(~kChunkZstd);
    out->append(*body);
  } else {
    out->append(packed.data(), csize);
  }
  h.payload_size = static_cast<uint32_t>(out->size() - base - sizeof(ChunkHeader));
  h.payload_hash = hash64(out->data() + base + sizeof(ChunkHeader), h.payload_size);
  seal(&h);
  std::memcpy(out->data() + base, &h, sizeof h);
}

size_t encode_events_raw(const Record* records, uint32_t n, uint32_t rank, uint32_t thread, char* out,
                         size_t cap) {
  const size_t need = sizeof(ChunkHeader) + static_cast<size_t>(n) * sizeof(Record);
  if (need > cap) return 0;
  ChunkHeader h{};
  h.magic = kChunkMagic;
  h.kind = static_cast<uint16_t>(ChunkKind::kEvents);
  h.flags = 0;
  h.rank = rank;
  h.thread = thread;
  h.nrecords = n;
  h.raw_size = h.payload_size = n * static_cast<uint32_t>(sizeof(Record));
  h.t_first = n ? UINT64_MAX : 0;
  for (uint32_t i = 0; i < n; ++i) {
    h.t_first = std::min(h.t_first, records[i].time);
    const uint64_t end = records[i].time + (records[i].kind == 1 ? records[i].c : 0);
    h.t_last = std::max(h.t_last, end);
  }
  for (auto& s : h.summary) s = CategoryTime{0xFFFFFFFFu, 0, 0};
  std::memcpy(out + sizeof h, records, h.payload_size);
  h.payload_hash = hash64(out + sizeof h, h.payload_size);
  seal(&h);
  std::memcpy(out, &h, sizeof h);
  return need;
}

bool encode_blob(ChunkKind kind, uint32_t rank, const std::string& blob, std::string* out) {
  if (blob.size() > kMaxBlobChunkBytes) return false;
  ChunkHeader h{};
  h.magic = kChunkMagic;
  h.kind = static_cast<uint16_t>(kind);
  h.flags = kChunkZstd;
  h.rank = rank;
  h.raw_size = static_cast<uint32_t>(blob.size());
  for (auto& s : h.summary) s = CategoryTime{0xFFFFFFFFu, 0, 0};
  std::string c(ZSTD_compressBound(blob.size()), '\0');
  const size_t csize = ZSTD_compress(c.data(), c.size(), blob.data(), blob.size(), 3);
  if (ZSTD_isError(csize)) {
    h.flags = 0;
    c = blob;
  } else {
    c.resize(csize);
  }
  h.payload_size = static_cast<uint32_t>(c.size());
  h.payload_hash = hash64(c.data(), c.size());
  seal(&h);
  out->append(reinterpret_cast<const char*>(&h), sizeof h);
  out->append(c);
  return true;
}

Status check_chunk_header(const ChunkHeader& h, uint64_t avail, uint64_t offset) {
  const std::string at = " at offset " + std::to_string(offset);
  if (avail < sizeof(ChunkHeader)) return Status(StatusCode::kTruncated, "chunk header cut short" + at);
  if (h.magic != kChunkMagic) return corrupt("no chunk" + at);
  if (h.header_hash != hash64(&h, offsetof(ChunkHeader, header_hash)))
    return corrupt("chunk header checksum mismatch" + at);
  if (h.kind < 1 || h.kind > 3) return corrupt("unknown chunk kind" + at);
  if (h.kind == static_cast<uint16_t>(ChunkKind::kEvents) &&
      static_cast<uint64_t>(h.nrecords) * sizeof(Record) != h.raw_size)
    return corrupt("chunk record count and size disagree" + at);
  if (!(h.flags & (kChunkZstd | kChunkPlanes)) && h.payload_size != h.raw_size)
    return corrupt("stored chunk has a bad size" + at);
  if ((h.flags & kChunkPlanes) &&
      (h.kind != static_cast<uint16_t>(ChunkKind::kEvents) || !(h.flags & kChunkShuffled) || h.nrecords == 0))
    return corrupt("chunk flags disagree" + at);
  if (h.raw_size > (1u << 30)) return corrupt("chunk larger than 1 GiB" + at);
  if (avail - sizeof(ChunkHeader) < h.payload_size)
    return Status(StatusCode::kTruncated, "chunk payload cut short" + at);
  return Status();
}

namespace {
// Decompresses `size` bytes at `payload` into exactly `expect` bytes at `out`.
Status inflate(const ChunkHeader& h, const char* payload, size_t size, size_t expect, std::string* out) {
  if (h.flags & kChunkZstd) {
    out->resize(expect);
    const size_t got = ZSTD_decompress(out->data(), out->size(), payload, size);
    if (ZSTD_isError(got) || got != expect) return corrupt("chunk payload does not decompress");
  } else {
    if (size != expect) return corrupt("stored chunk has a bad size");
    out->assign(payload, size);
  }
  return Status();
}

// The inverse of split_planes(): the full shuffled buffer, constant planes filled in.
Status join_planes(const ChunkHeader& h, const char* payload, std::string* out) {
  const uint32_t n = h.nrecords;
  uint32_t mask;
  if (h.payload_size < sizeof mask) return corrupt("chunk plane header cut short");
  std::memcpy(&mask, payload, sizeof mask);
  const uint32_t nconst = static_cast<uint32_t>(__builtin_popcount(mask));
  const size_t head = sizeof mask + nconst;
  if (h.payload_size < head) return corrupt("chunk plane header cut short");
  std::string varying;
  MPE_RETURN_IF_ERROR(inflate(h, payload + head, h.payload_size - head,
                              static_cast<size_t>(kRecordPlanes - nconst) * n, &varying));
  out->resize(h.raw_size);
  const char* constant = payload + sizeof mask;
  const char* next = varying.data();
  for (uint32_t j = 0; j < kRecordPlanes; ++j) {
    char* plane = out->data() + static_cast<size_t>(j) * n;
    if (mask & (1u << j)) {
      std::memset(plane, *constant++, n);
    } else {
      std::memcpy(plane, next, n);
      next += n;
    }
  }
  return Status();
}

Status payload_bytes(const ChunkHeader& h, const char* payload, std::string* out) {
  if (hash64(payload, h.payload_size) != h.payload_hash) return corrupt("chunk payload checksum mismatch");
  if (h.flags & kChunkPlanes) return join_planes(h, payload, out);
  return inflate(h, payload, h.payload_size, h.raw_size, out);
}
}  // namespace

Status decode_events(const ChunkHeader& h, const char* payload, std::vector<Record>* out,
                     std::string* scratch) {
  std::string local;
  std::string& raw = scratch ? *scratch : local;
  MPE_RETURN_IF_ERROR(payload_bytes(h, payload, &raw));
  out->resize(h.nrecords);
  if (h.flags & kChunkShuffled)
    unshuffle(raw.data(), h.nrecords, out->data());
  else if (h.nrecords)
    std::memcpy(out->data(), raw.data(), raw.size());
  return Status();
}

Status decode_blob(const ChunkHeader& h, const char* payload, std::string* out) {
  return payload_bytes(h, payload, out);
}

uint32_t default_mpi_color(const std::string& n) {
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has("Wait") || has("Test")) return 0xD03030;
  if (has("Barrier")) return 0xFFD700;
  if (has("Bcast") || has("reduce") || has("Reduce") || has("gather") || has("Gather") || has("scatter") ||
      has("Scatter") || has("alltoall") || has("Alltoall") || has("scan") || has("Scan"))
    return 0xFF8C00;
  if (has("Sendrecv")) return 0x8A2BE2;
  if (has("send") || has("Send")) return 0x1E90FF;
  if (has("recv") || has("Recv")) return 0x32CD32;
  if (has("probe") || has("Probe")) return 0x20B2AA;
  if (has("Init") || has("Finalize")) return 0x808080;
  if (has("Pcontrol")) return 0xFFFFFF;
  if (has("File")) return 0x8B4513;
  if (has("Win") || has("Put") || has("Get") || has("Accumulate")) return 0xDA70D6;
  return 0xA0A0A0;
}

}  // namespace mpe::log
