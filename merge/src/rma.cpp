// RMA matching (see mpe/rma.h).
#include "mpe/rma.h"

#include <algorithm>
#include <string>

#include "mpe/log_reader.h"  // LogFile::category

namespace mpe::format {

bool rma_kind_of(const RoutineInfo& routine, RmaKind* kind) {
  if (routine.family != RoutineFamily::kRmaOp) return false;
  *kind = routine.rma;
  return true;
}

bool rma_kind_of(std::string_view function, RmaKind* kind) {
  return rma_kind_of(routine_by_name(function), kind);
}

const char* rma_kind_name(RmaKind kind) {
  switch (kind) {
    case RmaKind::kPut:
      return "put";
    case RmaKind::kGet:
      return "get";
    case RmaKind::kAccumulate:
      return "accumulate";
    case RmaKind::kGetAccumulate:
      return "get_accumulate";
    case RmaKind::kFetchAndOp:
      return "fetch_and_op";
    case RmaKind::kCompareAndSwap:
      return "compare_and_swap";
  }
  return "?";
}

void RmaMatcher::feed(uint32_t rank, uint32_t timeline, const Event& e) {
  const Definitions& defs = file_.definitions();
  if (rank >= defs.ranks.size()) return;
  const RankMeta& rm = defs.ranks[rank];
  if (e.kind == RecordKind::kWinCreate) {
    const WinCreateRecord created = as<WinCreateRecord>(e);
    const uint32_t comm = created.comm;
    const int32_t ordinal = static_cast<int32_t>(created.ordinal);
    // An unknown communicator gets a rank-local key: its window stays apart, its targets unresolved.
    const bool known = comm < rm.comms.size() && rm.comms[comm].index == comm;
    const uint64_t gid = known ? rm.comms[comm].global_id : (1ull << 61) | (uint64_t{rank} << 32) | comm;
    auto [it, added] = window_ids_.try_emplace({gid, ordinal}, static_cast<uint32_t>(model_.windows.size()));
    if (added) {
      RmaWindow w;
      w.id = it->second;
      w.comm = gid;
      w.ordinal = ordinal;
      w.cat = e.cat;
      if (known) w.members = rm.comms[comm].members;
      w.bytes.assign(w.members.size(), 0);
      model_.windows.push_back(std::move(w));
    }
    RmaWindow& w = model_.windows[it->second];
    const auto me = std::find(w.members.begin(), w.members.end(), static_cast<int32_t>(rank));
    if (me != w.members.end()) w.bytes[static_cast<size_t>(me - w.members.begin())] = created.size;
    window_of_[{rank, created.window}] = it->second;
    return;
  }
  if (e.kind == RecordKind::kRmaOp) {
    const RmaOpRecord op = as<RmaOpRecord>(e);
    RmaKind k;
    const Category* category = file_.category(e.cat);
    if (!category || !rma_kind_of(category->routine, &k)) return;
    const auto win = window_of_.find({rank, op.window});
    const RmaWindow* w = win == window_of_.end() ? nullptr : &model_.windows[win->second];
    if (!w || op.target < 0 || static_cast<size_t>(op.target) >= w->members.size()) {
      ++model_.unresolved;
      return;
    }
    RmaTransfer t;
    t.origin_timeline = timeline;
    t.origin = static_cast<int32_t>(rank);
    t.target = w->members[static_cast<size_t>(op.target)];
    t.window = w->id;
    t.kind = k;
    t.cat = e.cat;
    t.sent = op.sent;
    t.received = op.received > 0 ? static_cast<uint64_t>(op.received) : 0;
    t.start = e.time;
    pending_.issue(uint64_t{rank} << 32 | w->id, op.target, model_.transfers.size());
    model_.transfers.push_back(t);
    return;
  }
  if (e.kind != RecordKind::kRmaComplete) return;
  const RmaCompleteRecord sync = as<RmaCompleteRecord>(e);
  const auto win = window_of_.find({rank, sync.window});
  if (win == window_of_.end()) return;
  pending_.complete(uint64_t{rank} << 32 | win->second, sync.target, [&](uint64_t transfer) {
    model_.transfers[transfer].complete = e.time;
    model_.transfers[transfer].complete_cat = e.cat;
  });
}

RmaModel RmaMatcher::finish() {
  std::stable_sort(model_.transfers.begin(), model_.transfers.end(),
                   [](const RmaTransfer& x, const RmaTransfer& y) { return x.start < y.start; });
  pending_ = RmaPending();
  return std::move(model_);
}

}  // namespace mpe::format
