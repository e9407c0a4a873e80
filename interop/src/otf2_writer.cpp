// .mpelog -> OTF2: the archive and the phases of Otf2Export (mpe/otf2_export.h), and what every
// process numbers alike from the log (communicators, call sites' frames, calling contexts). Each
// location (rank, thread) is built from its chunks alone, as format::interpret_records() reads them
// (otf2_write_gather.cpp): states and points, then Enter/Leave and the point events in time order
// with a nesting stack (otf2_write_location.cpp). A log with call sites gets them as Score-P
// writes an unwound stack: calling-context trees and CallingContextEnter/Leave instead of
// Enter/Leave. Nonblocking requests (liblog's request records) become OTF2's request events:
// MpiIsend ... MpiIrecv for messages, NonBlockingCollectiveRequest/Complete for collectives. What
// the log cannot say (request ids of persistent requests, receive sizes of collectives) is
// documented in docs/interop.md.
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "otf2_common.h"
#include "otf2_write_state.h"

namespace mpe::interop {

namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_FlushCallbacks kFlushCallbacks = {pre_flush, nullptr};

}  // namespace

namespace detail {

ExportState::ExportState(const format::LogFile& l) : log(l) {
  build_comms();
  build_frames();
}

void ExportState::build_frames() {
  std::unordered_map<std::string, uint32_t> ids;
  for (const format::CallSite& site : log.callsites()) {
    std::vector<uint32_t> chain;
    for (const Frame& f : site.frames) {
      auto [it, fresh] = ids.try_emplace(callsite_key({f}), static_cast<uint32_t>(frames.size()));
      if (fresh) frames.push_back(&f);
      chain.push_back(it->second);
    }
    site_frames.push_back(std::move(chain));
  }
  use_contexts = !site_frames.empty();
}

uint32_t ExportState::context_node(uint32_t parent, uint32_t kind, uint32_t a, uint32_t b) {
  auto [it, fresh] = context_ids.try_emplace({parent, kind, a, b}, static_cast<uint32_t>(contexts.size()));
  if (fresh)
    contexts.push_back(ContextNode{
        parent, kind, a, b, parent == OTF2_UNDEFINED_CALLING_CONTEXT ? 1 : contexts[parent].depth + 1});
  return it->second;
}

uint32_t ExportState::context(uint32_t parent, uint32_t cat, uint32_t site) {
  if (site >= 1 && site <= site_frames.size()) {
    const auto& chain = site_frames[site - 1];
    for (size_t k = chain.size(); k-- > 0;) parent = context_node(parent, kFrameContext, chain[k], 0);
  }
  return context_node(parent, kStateContext, cat, site);
}

// The nodes newly entered (those of next's path below the deepest node the two share) plus one,
// the shared node that made progress (possibly the undefined root).
uint32_t ExportState::unwind_distance(uint32_t previous, uint32_t next) const {
  auto depth = [&](uint32_t c) { return c == OTF2_UNDEFINED_CALLING_CONTEXT ? 0u : contexts[c].depth; };
  uint32_t a = next, b = previous;
  while (depth(a) > depth(b)) a = contexts[a].parent;
  while (depth(b) > depth(a)) b = contexts[b].parent;
  while (a != b) a = contexts[a].parent, b = contexts[b].parent;
  return depth(next) - depth(a) + 1;
}

// Every rank's MPI_COMM_SELF (id (1 << 62) | rank, the rank alone) becomes one communicator
// with a group of type COMM_SELF, as in Score-P's archives.
void ExportState::build_comms() {
  std::map<uint64_t, uint32_t> ref_of;
  std::optional<uint32_t> self_ref;
  const auto& ranks = log.definitions().ranks;
  comm_of.resize(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r)
    for (const auto& c : ranks[r].comms) {
      const auto rank = static_cast<int32_t>(r);
      const bool self =
          !c.inter && c.global_id == ((1ull << 62) | r) && c.members.size() == 1 && c.members[0] == rank;
      uint32_t ref = static_cast<uint32_t>(comms.size());
      if (self && self_ref) {
        ref = *self_ref;
      } else if (self) {
        self_ref = ref;
        comms.push_back(CommInfo{c.global_id, false, {}, true});
      } else {
        auto [it, fresh] = ref_of.try_emplace(c.global_id, ref);
        if (fresh) comms.push_back(CommInfo{c.global_id, c.inter, c.members});
        ref = it->second;
      }
      if (comm_of[r].size() <= c.index) comm_of[r].resize(c.index + 1, OTF2_UNDEFINED_COMM);
      comm_of[r][c.index] = ref;
    }
}

}  // namespace detail

Otf2Export::Otf2Export(const format::LogFile& log) : impl_(new Impl(log)) { detail::capture_otf2_errors(); }

Otf2Export::~Otf2Export() {
  if (impl_->archive) OTF2_Archive_Close(impl_->archive);
  delete impl_;
}

Status Otf2Export::create(const std::string& dir) {
  impl_->archive = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                     OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!impl_->archive)
    return detail::otf2_error("cannot create the OTF2 archive " + dir, OTF2_ERROR_FILE_INTERACTION);
  OTF2_ErrorCode e = OTF2_Archive_SetFlushCallbacks(impl_->archive, &kFlushCallbacks, nullptr);
  if (e == OTF2_SUCCESS) e = OTF2_Archive_SetCreator(impl_->archive, "mpe-tools");
  if (e == OTF2_SUCCESS)
    e = OTF2_Archive_SetDescription(impl_->archive, impl_->log.definitions().program.c_str());
  if (e != OTF2_SUCCESS) return detail::otf2_error("setting up the OTF2 archive " + dir, e);
  return Status();
}

Status Otf2Export::set_collectives(const CollectiveSetup& setup) {
  const OTF2_ErrorCode e =
      setup ? setup(impl_->archive) : OTF2_Archive_SetSerialCollectiveCallbacks(impl_->archive);
  return e == OTF2_SUCCESS ? Status() : detail::otf2_error("installing the OTF2 collective callbacks", e);
}

Status Otf2Export::open(const std::string& dir, const CollectiveSetup& setup) {
  MPE_RETURN_IF_ERROR(create(dir));
  return set_collectives(setup);
}

Status Otf2Export::open_event_files() {
  const OTF2_ErrorCode e = OTF2_Archive_OpenEvtFiles(impl_->archive);
  return e == OTF2_SUCCESS ? Status() : detail::otf2_error("opening the OTF2 event files", e);
}

Status Otf2Export::write_rank_events(uint32_t rank, Progress* progress) {
  const auto& index = impl_->log.index();
  const auto& defs = impl_->log.definitions();
  // Every thread the rank defined gets a location, even without events, and thread 0 always
  // (it stands for the rank in the communicators' location group).
  std::set<uint32_t> threads = {0};
  if (rank < defs.ranks.size())
    for (const auto& t : defs.ranks[rank].threads) threads.insert(t.index);
  // The index is ordered by rank and thread in liblog's files, but a reader must not rely on it
  // (`mpe merge --recover` and `mpe synth` interleave): collect each thread's chunks.
  std::map<uint32_t, std::vector<size_t>> chunks;
  for (size_t i = 0; i < index.size(); ++i) {
    if (index[i].rank != rank) continue;
    chunks[index[i].thread].push_back(i);
    threads.insert(index[i].thread);
  }
  Status first_error;
  for (uint32_t t : threads) {
    const Status s = impl_->write_location(rank, t, chunks[t], progress);
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  return first_error;
}

Status Otf2Export::close_event_files() {
  const OTF2_ErrorCode e = OTF2_Archive_CloseEvtFiles(impl_->archive);
  return e == OTF2_SUCCESS ? Status() : detail::otf2_error("closing the OTF2 event files", e);
}

Status Otf2Export::close() {
  if (!impl_->archive) return Status();
  const OTF2_ErrorCode e = OTF2_Archive_Close(impl_->archive);
  impl_->archive = nullptr;
  return e == OTF2_SUCCESS ? Status() : detail::otf2_error("closing the OTF2 archive", e);
}

Status mpelog_to_otf2(const std::string& log_path, const std::string& out_dir) {
  auto log = format::LogFile::open(log_path);
  if (!log.ok()) return Status(log.status().code(), log_path + ": " + log.status().message());
  AtomicOutput out(out_dir);
  Otf2Export x(*log);
  MPE_RETURN_IF_ERROR(x.open(out.tmp_path(), {}));
  MPE_RETURN_IF_ERROR(x.open_event_files());
  {
    Progress progress("writing OTF2", log->index().size());
    for (uint32_t r = 0; r < log->definitions().world_size; ++r)
      MPE_RETURN_IF_ERROR(x.write_rank_events(r, &progress));
  }
  MPE_RETURN_IF_ERROR(x.close_event_files());
  MPE_RETURN_IF_ERROR(x.write_global_definitions({x.summary()}));
  MPE_RETURN_IF_ERROR(x.write_local_definitions(x.region_table()));
  MPE_RETURN_IF_ERROR(x.close());
  return out.commit();
}

}  // namespace mpe::interop
