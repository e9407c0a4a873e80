// Serialization of a logfile's definitions: categories, communicators' groups (stored once per
// run), ranks, call sites and counters. The format is in docs/FORMAT.md.
#include "mpe/log_defs.h"

#include <cmath>
#include <cstring>

namespace mpe::format {

namespace {

// Sanity bound on every serialized count (ranks, groups, members: up to 2^31 ranks); each count is
// also bounded by the bytes left.
constexpr uint32_t kMaxItems = 1u << 31;

void put_category(ByteWriter& w, const Category& c) {
  w.u32(c.id);
  w.u8(static_cast<uint8_t>(c.kind));
  w.u32(c.end_id);
  w.u32(c.color);
  w.str(c.name);
  // v6: the routine's class, so that readers need not know the routine's name.
  w.u8(static_cast<uint8_t>(c.routine.family));
  w.u8(static_cast<uint8_t>(c.routine.mode));
  w.u8(static_cast<uint8_t>(c.routine.shape));
  w.u8(static_cast<uint8_t>(c.routine.send_mode));
  w.u8(static_cast<uint8_t>(c.routine.rma));
  w.str(c.routine.cls);
}

// A routine's class (v6); false on a value out of its range.
bool get_routine(ByteReader& r, RoutineInfo* routine) {
  uint8_t family, mode, shape, send_mode, rma;
  if (!r.u8(&family) || !r.u8(&mode) || !r.u8(&shape) || !r.u8(&send_mode) || !r.u8(&rma) ||
      !r.str(&routine->cls))
    return false;
  if (family >= kRoutineFamilyCount || mode > 2 || shape > 5 || send_mode > 3 || rma > 5) return false;
  routine->family = static_cast<RoutineFamily>(family);
  routine->mode = static_cast<RoutineMode>(mode);
  routine->shape = static_cast<CollectiveShape>(shape);
  routine->send_mode = static_cast<SendMode>(send_mode);
  routine->rma = static_cast<RmaKind>(rma);
  return true;
}

bool get_category(ByteReader& r, Category* c, uint16_t version) {
  uint8_t kind;
  if (!r.u32(&c->id) || !r.u8(&kind) || !r.u32(&c->end_id) || !r.u32(&c->color) || !r.str(&c->name))
    return false;
  if (kind > 1) return false;
  c->kind = static_cast<CategoryKind>(kind);
  if (version >= kFirstRoutineVersion) return get_routine(r, &c->routine);
  // Before v6 only the name was stored: the MPI routine's class comes from the compiled-in table.
  if (c->kind == CategoryKind::kState && c->id < kUserCategoryBase) c->routine = routine_by_name(c->name);
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
  w.str(m.filter);  // v7
  w.u32(static_cast<uint32_t>(m.left_out.size()));
  for (const LeftOut& l : m.left_out) {
    w.u32(l.category);
    w.u64(l.calls);
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
    if (!get_category(r, &c, version)) return false;
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
  if (version < kFirstFilterVersion) return true;
  if (!r.str(&m->filter) || !get_count(r, &n, 12)) return false;
  m->left_out.resize(n);
  for (LeftOut& l : m->left_out)
    if (!r.u32(&l.category) || !r.u64(&l.calls)) return false;
  return true;
}

}  // namespace

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
    return Status::corrupt("rank definitions are malformed");
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
    return Status::corrupt("definitions header is malformed");
  if (!(out->ticks_per_second > 0) || !std::isfinite(out->ticks_per_second))
    return Status::corrupt("definitions give a bad clock rate");
  out->recovered = rec != 0;
  out->categories.resize(k);
  for (auto& c : out->categories)
    if (!get_category(r, &c, version)) return Status::corrupt("a category definition is malformed");
  MemberInterner interner;
  GroupSource groups{&interner, nullptr, {}};
  std::vector<MemberList> table;
  if (version >= kFirstGroupTableVersion) {
    // Every rank takes 40 bytes or more after the groups: a world size the bytes cannot hold is
    // corrupt before any group is expanded.
    if (uint64_t{out->world_size} * 40 > r.left())
      return Status::corrupt("world size exceeds the definitions");
    if (!get_count(r, &k, 9)) return Status::corrupt("group count is malformed");
    table.resize(k);
    std::vector<int32_t> members;
    for (auto& g : table) {
      if (!get_members(r, member_limit(out->world_size), &members))
        return Status::corrupt("a group definition is malformed");
      out->storage.members += members.size();
      g = MemberList(std::move(members));
      members = {};
    }
    out->storage.groups = table.size();
    groups = GroupSource{nullptr, &table, interner.world(out->world_size)};
  }
  if (!get_count(r, &k, 40)) return Status::corrupt("rank count is malformed");
  out->ranks.resize(k);
  for (auto& m : out->ranks)
    if (!get_rank(r, &m, version, groups)) return Status::corrupt("rank definitions are malformed");
  for (size_t i = 0; i < out->ranks.size(); ++i)
    if (out->ranks[i].rank != i) return Status::corrupt("rank definitions are out of order");
  if (version < kFirstGroupTableVersion)  // every rank's lists were stored inline
    for (const RankMeta& m : out->ranks)
      for (const CommDef& c : m.comms) {
        ++out->storage.groups;
        out->storage.members += c.members.size();
      }
  if (out->world_size != out->ranks.size())
    return Status::corrupt("world size does not match the rank definitions");
  return Status();
}

}  // namespace mpe::format
