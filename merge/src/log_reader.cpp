// The logfile reader: validates every length, offset and checksum, then builds the model.
#include "mpe/log_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>

#include "mpe/file_io.h"

namespace mpe::format {

namespace {

Status io_error(const std::string& path, const std::string& what) {
  return Status(StatusCode::kIoError, path + ": " + what + ": " + std::strerror(errno));
}

}  // namespace

StatusOr<LogFile> LogFile::open(const std::string& path) {
  auto source = io::open_file_source(path);
  if (!source.ok()) return io_error(path, "cannot open");  // errno is still open()'s or fstat()'s
  return open(*source);
}

StatusOr<LogFile> LogFile::open(std::shared_ptr<const io::ByteSource> source) {
  LogFile f;
  f.source_ = std::move(source);
  const io::ByteSource& in = *f.source_;
  const std::string& path = in.name();
  f.file_size_ = in.size();

  FileHeader h{};
  if (f.file_size_ < 8 || !in.read(&h, std::min<uint64_t>(sizeof h, f.file_size_), 0).ok() ||
      std::memcmp(h.magic, kFileMagic, 8) != 0)
    return Status(StatusCode::kNotALogfile, path + " is not an .mpelog logfile (no MPELOG magic)");
  if (f.file_size_ < sizeof h) return Status(StatusCode::kTruncated, path + ": header cut short");
  if (h.version > kCurrentVersion || h.version < kMinSupportedVersion)
    return Status(StatusCode::kUnsupportedVersion,
                  path + ": format version " + std::to_string(h.version) + ", this reader supports " +
                      std::to_string(kMinSupportedVersion) + ".." + std::to_string(kCurrentVersion));
  if (h.header_hash != hash64(&h, offsetof(FileHeader, header_hash)) || h.header_size != sizeof h)
    return Status::corrupt(path + ": header checksum mismatch");
  if (f.file_size_ < sizeof h + sizeof(Footer))
    return Status(StatusCode::kTruncated,
                  path + ": no footer (file cut short; if the run died, try `mpe merge --recover`)");

  Footer ft{};
  MPE_RETURN_IF_ERROR(in.read(&ft, sizeof ft, f.file_size_ - sizeof ft));
  if (std::memcmp(ft.magic, kFooterMagic, 8) != 0)
    return Status(StatusCode::kTruncated, path +
                                              ": no footer at the end (file cut short or still being "
                                              "written; if the run died, try `mpe merge --recover`)");
  if (ft.footer_hash != hash64(&ft, offsetof(Footer, footer_hash)))
    return Status::corrupt(path + ": footer checksum mismatch");
  if (ft.file_size != f.file_size_)
    return Status(ft.file_size > f.file_size_ ? StatusCode::kTruncated : StatusCode::kCorrupt,
                  path + ": footer says " + std::to_string(ft.file_size) + " bytes, file has " +
                      std::to_string(f.file_size_));
  const uint64_t tail_end = f.file_size_ - sizeof ft;
  if (ft.definitions_offset < sizeof h || ft.definitions_size < sizeof(ChunkHeader) ||
      ft.definitions_offset > tail_end || ft.definitions_size > tail_end - ft.definitions_offset)
    return Status::corrupt(path + ": definitions lie outside the file");
  if (ft.index_count > (tail_end / sizeof(IndexEntry)) || ft.index_offset > tail_end ||
      ft.index_count * sizeof(IndexEntry) > tail_end - ft.index_offset)
    return Status::corrupt(path + ": index lies outside the file");

  // The definitions: one chunk before version 5, then as many as their size needs, back to back.
  std::string blob;
  for (uint64_t at = 0; at < ft.definitions_size;) {
    const uint64_t offset = ft.definitions_offset + at;
    ChunkHeader dh{};
    MPE_RETURN_IF_ERROR(in.read(&dh, sizeof dh, offset));
    Status s = check_chunk_header(dh, ft.definitions_size - at, offset);
    if (!s.ok()) return Status(StatusCode::kCorrupt, path + ": definitions: " + s.message());
    if (dh.kind != static_cast<uint16_t>(ChunkKind::kDefinitions))
      return Status::corrupt(path + ": definitions chunk has the wrong kind");
    std::string payload(dh.payload_size, '\0'), piece;
    MPE_RETURN_IF_ERROR(in.read(payload.data(), payload.size(), offset + sizeof dh));
    s = decode_blob(dh, payload.data(), &piece);
    if (!s.ok()) return Status(StatusCode::kCorrupt, path + ": definitions: " + s.message());
    blob += piece;
    at += sizeof dh + dh.payload_size;
    ++f.defs_.storage.chunks;
    if (h.version < kFirstGroupTableVersion && at != ft.definitions_size)
      return Status::corrupt(path + ": definitions chunk and footer disagree on its size");
  }
  const Status parsed = parse_definitions(blob.data(), blob.size(), &f.defs_, h.version);
  if (!parsed.ok()) return Status(StatusCode::kCorrupt, path + ": " + parsed.message());
  f.defs_.storage.disk_bytes = ft.definitions_size;
  f.defs_.storage.decoded_bytes = blob.size();

  f.index_.resize(ft.index_count);
  if (ft.index_count)
    MPE_RETURN_IF_ERROR(in.read(f.index_.data(), ft.index_count * sizeof(IndexEntry), ft.index_offset));
  if (hash64(f.index_.data(), ft.index_count * sizeof(IndexEntry)) != ft.index_hash)
    return Status::corrupt(path + ": index checksum mismatch");
  const uint64_t data_end = std::min(ft.definitions_offset, ft.index_offset);
  for (size_t i = 0; i < f.index_.size(); ++i) {
    const IndexEntry& e = f.index_[i];
    if (e.offset < sizeof h || e.size < sizeof(ChunkHeader) || e.offset > data_end ||
        e.size > data_end - e.offset)
      return Status::corrupt(path + ": index entry " + std::to_string(i) + " points outside the data");
    if (e.rank >= f.defs_.world_size)
      return Status::corrupt(path + ": index entry " + std::to_string(i) + " names rank " +
                             std::to_string(e.rank));
  }

  f.version_ = h.version;
  f.unify_callsites();
  f.category_slot_.assign(0x10000, -1);
  for (size_t i = 0; i < f.defs_.categories.size(); ++i)
    if (f.defs_.categories[i].id < 0x10000)
      f.category_slot_[f.defs_.categories[i].id] = static_cast<int32_t>(i);
  f.origin_ = 0;
  bool first = true;
  for (const auto& e : f.index_) {
    const double t = f.defs_.ranks[e.rank].sync.correct(e.t_first);
    if (first || t < f.origin_) f.origin_ = t;
    first = false;
  }
  return f;
}

// Sites of all ranks with the same key become one run-wide site, numbered in order of first
// appearance (rank 0's first, in its id order).
void LogFile::unify_callsites() {
  std::unordered_map<std::string, uint32_t> by_key;
  site_of_.assign(defs_.ranks.size(), {});
  for (size_t rank = 0; rank < defs_.ranks.size(); ++rank) {
    for (const CallSiteDef& def : defs_.ranks[rank].callsites) {
      auto [it, fresh] =
          by_key.try_emplace(callsite_key(def.frames), static_cast<uint32_t>(callsites_.size() + 1));
      if (fresh) callsites_.push_back(CallSite{it->second, def.frames, mpe::callsite_text(def.frames)});
      std::vector<uint32_t>& map = site_of_[rank];
      if (def.id >= map.size()) map.resize(def.id + 1, 0);
      map[def.id] = it->second;
    }
  }
}

const std::string& LogFile::callsite_text(uint32_t id) const {
  static const std::string kNone;
  return id >= 1 && id <= callsites_.size() ? callsites_[id - 1].text : kNone;
}

StatusOr<std::vector<Record>> LogFile::read_chunk(size_t i) const {
  ChunkScratch scratch;
  std::vector<Record> out;
  MPE_RETURN_IF_ERROR(read_chunk(i, &scratch, &out));
  return out;
}

Status LogFile::read_chunk(size_t i, ChunkScratch* scratch, std::vector<Record>* out) const {
  if (i >= index_.size()) return Status(StatusCode::kInvalidArgument, "no chunk " + std::to_string(i));
  const IndexEntry& e = index_[i];
  std::string& buf = scratch->file_bytes;
  if (buf.size() < e.size) buf.resize(e.size);
  MPE_RETURN_IF_ERROR(source_->read(buf.data(), e.size, e.offset));
  ChunkHeader h;
  std::memcpy(&h, buf.data(), sizeof h);
  MPE_RETURN_IF_ERROR(check_chunk_header(h, e.size, e.offset));
  if (h.kind != static_cast<uint16_t>(ChunkKind::kEvents) || h.rank != e.rank || h.thread != e.thread ||
      h.nrecords != e.nrecords || sizeof h + h.payload_size != e.size)
    return Status::corrupt("chunk at offset " + std::to_string(e.offset) + " does not match its index entry");
  Status s = decode_events(h, buf.data() + sizeof h, out, &scratch->raw);
  if (!s.ok()) return Status(s.code(), s.message() + " (chunk at offset " + std::to_string(e.offset) + ")");
  return Status();
}

const Category* LogFile::category(uint32_t cat) const {
  if (cat >= category_slot_.size() || category_slot_[cat] < 0) return nullptr;
  return &defs_.categories[static_cast<size_t>(category_slot_[cat])];
}

std::string LogFile::category_name(uint32_t cat) const {
  const Category* c = category(cat);
  return c ? c->name : "cat" + std::to_string(cat);
}

int Trace::timeline_of(uint32_t rank, uint32_t thread) const {
  for (size_t i = 0; i < timelines.size(); ++i)
    if (timelines[i].rank == rank && timelines[i].thread == thread) return static_cast<int>(i);
  return -1;
}

UserStates::Fed UserStates::feed(const LogFile& file, uint32_t cat, int64_t t, uint32_t site,
                                 Closed* closed) {
  const Category* c = file.category(cat);
  if (c && c->kind == CategoryKind::kState && c->id == cat) {
    open_.push_back({cat, t});
    open_sites_.push_back(site);
    return Fed::kBegan;
  }
  for (size_t k = open_.size(); k-- > 0;) {
    const Category* sc = file.category(open_[k].first);
    if (sc && sc->end_id == cat) {
      *closed = Closed{open_[k].first, open_[k].second, static_cast<uint32_t>(k), open_sites_[k]};
      open_.erase(open_.begin() + static_cast<long>(k));
      open_sites_.erase(open_sites_.begin() + static_cast<long>(k));
      return Fed::kEnded;
    }
  }
  return Fed::kLone;
}

void add_causality_constraint(std::map<std::pair<int32_t, int32_t>, int64_t>* need, int32_t src, int32_t dst,
                              int64_t send_time, int64_t recv_time) {
  const int64_t w = saturating_add(saturating_add(send_time, -std::max(recv_time, INT64_MIN + 1)), 1);
  auto [it, fresh] = need->try_emplace({src, dst}, w);
  if (!fresh) it->second = std::max(it->second, w);
}

std::vector<int64_t> causality_shifts(const std::map<std::pair<int32_t, int32_t>, int64_t>& need,
                                      uint32_t nranks) {
  std::vector<int64_t> shift(nranks, 0);
  for (uint32_t round = 0; round <= nranks; ++round) {
    bool changed = false;
    for (const auto& [edge, w] : need) {
      if (edge.first == edge.second || edge.first < 0 || edge.second < 0 ||
          static_cast<uint32_t>(edge.first) >= nranks || static_cast<uint32_t>(edge.second) >= nranks)
        continue;
      const int64_t want = saturating_add(shift[static_cast<size_t>(edge.first)], w);
      if (shift[static_cast<size_t>(edge.second)] < want) {
        shift[static_cast<size_t>(edge.second)] = want;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return shift;
}

namespace {

// What the reader keeps per message end until matching (mpe/message_matcher.h).
struct MsgEnd {
  int64_t time;
  uint32_t timeline;
  uint64_t bytes;
};

// Causality repair, applied only when clock synchronisation left receives ending before their
// sends (its error bound is half a round trip, which an oversubscribed run can make large).
//
// Invariant: afterwards recv_time >= send_time for every message whenever the constraints
// allow it. Each rank gets one constant shift >= 0 (a correction of its clock offset); the
// constraints shift[dst] - shift[src] >= send - recv + 1 (the tightest per rank pair) are solved
// for the smallest shifts by Bellman-Ford longest paths. Cost: O(P * pairs) plus one pass over
// the records. Failure mode: constraints that contradict each other (a cycle of positive
// weight, which real message latencies cannot produce) stop after P rounds, leaving some
// messages backward; they are counted in backward_messages.
void enforce_causality(Trace* tr, uint32_t nranks) {
  std::map<std::pair<int32_t, int32_t>, int64_t> need;
  for (const auto& m : tr->messages) add_causality_constraint(&need, m.src, m.dst, m.send_time, m.recv_time);
  const std::vector<int64_t> shift = causality_shifts(need, nranks);
  auto tl_rank = [&](uint32_t tl) { return tr->timelines[tl].rank; };
  for (auto& m : tr->messages) {
    m.send_time = saturating_add(m.send_time, shift[tl_rank(m.send_timeline)]);
    m.recv_time = saturating_add(m.recv_time, shift[tl_rank(m.recv_timeline)]);
  }
  bool any = false;
  for (auto& T : tr->timelines) {
    const int64_t d = shift[T.rank];
    for (auto& st : T.states) st.start = saturating_add(st.start, d), st.end = saturating_add(st.end, d);
    for (auto& e : T.events) e.time = saturating_add(e.time, d);
    for (const auto& st : T.states) {
      if (!any || st.start < tr->t_begin) tr->t_begin = st.start;
      if (!any || st.end > tr->t_end) tr->t_end = st.end;
      any = true;
    }
    for (const auto& e : T.events) {
      if (!any || e.time < tr->t_begin) tr->t_begin = e.time;
      if (!any || e.time > tr->t_end) tr->t_end = e.time;
      any = true;
    }
  }
  tr->causality_shift_ns = shift;
  tr->backward_messages = 0;
  for (const auto& m : tr->messages)
    if (m.recv_time < m.send_time) ++tr->backward_messages;
}

}  // namespace

StatusOr<Trace> load_trace(const LogFile& file) { return load_trace(file, {}); }

StatusOr<Trace> load_trace(const LogFile& file, const std::vector<ChunkConsumer>& also_feed) {
  Trace tr;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> tl_of;
  MessageMatcher<MsgEnd> matcher;
  std::vector<UserStates> user_states;  // per timeline
  bool any = false;
  auto add_chunk = [&](const Chunk& chunk) {
    const IndexEntry& e = chunk.entry;
    auto [it, inserted] = tl_of.try_emplace({e.rank, e.thread}, static_cast<uint32_t>(tr.timelines.size()));
    if (inserted) {
      tr.timelines.push_back(Timeline{e.rank, e.thread, {}, {}});
      user_states.emplace_back();
    }
    const uint32_t tl = it->second;
    struct Sink {
      Trace& tr;
      Timeline& T;
      MessageMatcher<MsgEnd>& matcher;
      uint32_t tl;
      bool& any;
      void state(int64_t start, int64_t end, uint32_t cat, uint32_t depth, uint32_t site) {
        T.states.push_back(State{start, end, cat, depth, site});
      }
      void event(const Event& ev) {
        if (ev.kind == RecordKind::kSend) ++tr.unmatched_sends;
        if (ev.kind == RecordKind::kRecv) ++tr.unmatched_recvs;
        T.events.push_back(ev);
      }
      void message_end(bool send, const MessageKey& key, int64_t t, uint64_t bytes) {
        if (send)
          matcher.add_send(key, MsgEnd{t, tl, bytes});
        else
          matcher.add_recv(key, MsgEnd{t, tl, bytes});
      }
      void cancel_send(const MessageKey& key) { matcher.cancel_latest_send(key); }
      void span(int64_t t, int64_t end) {
        ++tr.records;
        if (!any || t < tr.t_begin) tr.t_begin = t;
        if (!any || end > tr.t_end) tr.t_end = end;
        any = true;
      }
    } sink{tr, tr.timelines[tl], matcher, tl, any};
    interpret_records(file, e, chunk.records, chunk.count, &user_states[tl], sink);
  };
  // One decode of each chunk, for the model and the callers' consumers; decoders on every core.
  std::vector<ChunkConsumer> consumers{add_chunk};
  consumers.insert(consumers.end(), also_feed.begin(), also_feed.end());
  ChunkPassOptions pass;
  pass.decoders = 0;
  MPE_RETURN_IF_ERROR(run_chunk_pass(file, consumers, pass));
  tr.messages.reserve(matcher.pairs());
  matcher.match(
      [&](const MessageKey& key, const MsgEnd& s, const MsgEnd& r) {
        tr.messages.push_back(Message{s.timeline, r.timeline, s.time, r.time, std::get<1>(key),
                                      std::get<2>(key), std::get<3>(key), std::get<0>(key), s.bytes});
        if (r.time < s.time) ++tr.backward_messages;
      },
      [&](const MessageKey&, size_t sends_left, size_t recvs_left) {
        tr.unmatched_sends += sends_left;
        tr.unmatched_recvs += recvs_left;
      });
  if (tr.backward_messages > 0) enforce_causality(&tr, file.definitions().world_size);
  std::sort(tr.messages.begin(), tr.messages.end(),
            [](const Message& a, const Message& b) { return a.send_time < b.send_time; });
  for (auto& T : tr.timelines) {
    std::stable_sort(T.states.begin(), T.states.end(), [](const State& a, const State& b) {
      return a.start != b.start ? a.start < b.start : a.depth < b.depth;
    });
    std::stable_sort(T.events.begin(), T.events.end(),
                     [](const Event& a, const Event& b) { return a.time < b.time; });
  }
  // Order timelines by (rank, thread) and renumber the messages' timeline references.
  std::vector<uint32_t> order(tr.timelines.size()), where(tr.timelines.size());
  for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Timeline& x = tr.timelines[a];
    const Timeline& y = tr.timelines[b];
    return x.rank != y.rank ? x.rank < y.rank : x.thread < y.thread;
  });
  std::vector<Timeline> sorted;
  sorted.reserve(order.size());
  for (uint32_t k = 0; k < order.size(); ++k) {
    where[order[k]] = k;
    sorted.push_back(std::move(tr.timelines[order[k]]));
  }
  tr.timelines = std::move(sorted);
  for (auto& m : tr.messages) {
    m.send_timeline = where[m.send_timeline];
    m.recv_timeline = where[m.recv_timeline];
  }
  tr.rma = match_rma(file, tr.timelines);
  return tr;
}

}  // namespace mpe::format
