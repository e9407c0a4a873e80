// Pass 1 over a logfile's communication endpoints, their matching and causality shifts. The
// design comment is in endpoints.h (and mpe/waits.h).
#include "endpoints.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>
#include <utility>

#include "mpe/records.h"
#include "timeline_scan.h"

namespace mpe::analysis {

namespace {

// A collective routine's kind, by its shape (mpe/routine.h). Persistent (_init) collectives are left
// out: their instances are the MPI_Start calls, which the log does not tie to them.
CollKind coll_kind(const format::RoutineInfo& routine) {
  if (routine.family != format::RoutineFamily::kCollective ||
      routine.mode == format::RoutineMode::kPersistentInit)
    return CollKind::kNone;
  switch (routine.shape) {
    case format::CollectiveShape::kBarrier:
      return CollKind::kBarrier;
    case format::CollectiveShape::kAllToAll:
      return CollKind::kNxN;
    case format::CollectiveShape::kOneToAll:
      return CollKind::kBroadcast;
    case format::CollectiveShape::kAllToOne:
      return CollKind::kReduce;
    case format::CollectiveShape::kNone:
    case format::CollectiveShape::kOther:
      break;
  }
  return CollKind::kNone;
}

}  // namespace

std::vector<Traits> category_traits(const format::LogFile& file) {
  std::vector<Traits> traits(format::kUserCategoryBase);
  for (const format::Category& c : file.definitions().categories) {
    if (c.id >= format::kUserCategoryBase) continue;
    Traits& t = traits[c.id];
    const format::RoutineInfo& r = c.routine;  // the log's class of the routine, never its name
    const bool blocking_send = r.family == format::RoutineFamily::kSend && r.blocking();
    t.blocking_send = blocking_send && r.send_mode == format::SendMode::kStandard;
    t.synchronous_send = blocking_send && r.send_mode == format::SendMode::kSynchronous;
    t.blocking_receive =
        (r.family == format::RoutineFamily::kRecv || r.family == format::RoutineFamily::kSendrecv) &&
        r.blocking();
    t.coll = coll_kind(r);
    t.nonblocking_coll = t.coll != CollKind::kNone && r.nonblocking();
  }
  return traits;
}

void match_messages(Endpoints& e, EndpointMatcher& matcher, uint64_t* unmatched) {
  matcher.match([&](const format::MessageKey&, uint32_t send, uint32_t recv) { e.recvs[recv].send = send; },
                [&](const format::MessageKey&, size_t sends_left, size_t recvs_left) {
                  *unmatched += sends_left + recvs_left;
                });
}

namespace {

// The collector's store: every end kept, in Endpoints, and handed to the matcher as it comes.
struct KeepEverything {
  Endpoints& out;
  EndpointMatcher& matcher;
  size_t add_send(const SendEnd& s, uint64_t) {
    out.sends.push_back(s);
    matcher.add_send(s.key, static_cast<uint32_t>(out.sends.size() - 1));
    return out.sends.size() - 1;
  }
  size_t add_recv(const RecvEnd& r, uint64_t) {
    out.recvs.push_back(r);
    matcher.add_recv(r.key, static_cast<uint32_t>(out.recvs.size() - 1));
    return out.recvs.size() - 1;
  }
  size_t add_coll(const CollEnd& c, uint64_t) {
    out.colls.push_back(c);
    return out.colls.size() - 1;
  }
  SendEnd& send(size_t i) { return out.sends[i]; }
  RecvEnd& recv(size_t i) { return out.recvs[i]; }
  CollEnd& coll(size_t i) { return out.colls[i]; }
  void resolved(Need, size_t) {}
  void cancel_send(const format::MessageKey& key, uint64_t) {
    if (const auto send = matcher.cancel_latest_send(key)) out.sends[*send].cancelled = true;
  }
};

}  // namespace

struct EndpointCollector::Impl {
  Impl(const format::LogFile& f, const CollectSettings& settings)
      : file(f), traits(category_traits(f)), out(std::make_shared<Collected>()) {
    options.eager_limit = settings.eager_limit;
    options.collectives = settings.collectives;
    out->collectives = settings.collectives;
    out->totals.mpi_per_rank.assign(f.definitions().world_size, 0);
  }

  const format::LogFile& file;
  ScanOptions options;
  const std::vector<Traits> traits;
  std::shared_ptr<Collected> out;
  EndpointMatcher matcher{EndpointTime{&out->endpoints}};
  KeepEverything store{out->endpoints, matcher};
  TimelineScan<KeepEverything>::Shared shared{file, traits, options, out->totals, {}};
  // The timeline being scanned: the chunks of one timeline are consecutive in the index.
  std::unique_ptr<TimelineScan<KeepEverything>> scan;
  uint32_t rank = UINT32_MAX, thread = UINT32_MAX;
};

EndpointCollector::EndpointCollector(const format::LogFile& file, const CollectSettings& settings)
    : impl_(std::make_unique<Impl>(file, settings)) {}

EndpointCollector::~EndpointCollector() = default;

void EndpointCollector::consume(const format::Chunk& chunk) {
  Impl& m = *impl_;
  if (chunk.entry.rank != m.rank || chunk.entry.thread != m.thread) {
    m.scan.reset();  // settles the previous timeline's pending endpoints first
    m.rank = chunk.entry.rank;
    m.thread = chunk.entry.thread;
    m.scan = std::make_unique<TimelineScan<KeepEverything>>(m.shared, m.store, m.rank, m.thread);
  }
  m.out->totals.records += chunk.count;
  m.scan->feed(chunk.records, chunk.count, chunk.index);
}

std::shared_ptr<Collected> EndpointCollector::finish() {
  Impl& m = *impl_;
  m.scan.reset();
  std::shared_ptr<Collected> c = std::move(m.out);
  match_messages(c->endpoints, m.matcher, &c->unmatched);
  c->shift = causality_shifts(c->endpoints, m.file.definitions().world_size);
  return c;
}

std::vector<MatchedMessage> matched_messages(const Collected& c) {
  std::vector<MatchedMessage> out;
  const Endpoints& e = c.endpoints;
  auto shift_of = [&](int32_t rank) {
    return rank >= 0 && static_cast<size_t>(rank) < c.shift.size() ? c.shift[static_cast<size_t>(rank)] : 0;
  };
  for (const RecvEnd& r : e.recvs) {
    if (r.send == kNoSend) continue;
    const SendEnd& s = e.sends[r.send];
    const int32_t src = std::get<1>(s.key), dst = std::get<2>(s.key);
    out.push_back(MatchedMessage{src, dst, std::get<3>(s.key), s.time + shift_of(src), r.time + shift_of(dst),
                                 s.bytes});
  }
  return out;
}

StatusOr<std::shared_ptr<Collected>> collect(const format::LogFile& file, const ScanOptions& options) {
  EndpointCollector collector(file, CollectSettings{options.eager_limit, options.collectives});
  // One decoder thread ahead of the scan: decoding is about half the work.
  format::ChunkPassOptions pass;
  pass.decoders = 1;
  pass.what = options.what;
  if (options.keep_going) pass.keep_going = [&](size_t) { return options.keep_going(); };
  MPE_RETURN_IF_ERROR(format::run_chunk_pass(file, {collector.consumer()}, pass));
  return collector.finish();
}

std::vector<int64_t> causality_shifts(const Endpoints& e, uint32_t nranks) {
  std::map<std::pair<int32_t, int32_t>, int64_t> need;
  for (const RecvEnd& r : e.recvs)
    if (r.send != kNoSend && r.time < e.sends[r.send].time)
      format::add_causality_constraint(&need, std::get<1>(r.key), std::get<2>(r.key), e.sends[r.send].time,
                                       r.time);
  std::vector<int64_t> shift =
      need.empty() ? std::vector<int64_t>(nranks, 0) : format::causality_shifts(need, nranks);
  shift.resize(nranks, 0);
  return shift;
}

}  // namespace mpe::analysis
