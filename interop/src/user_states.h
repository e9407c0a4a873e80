// Pairs a thread's MPE user events into user states (start id, end id, as the definitions
// describe them), the way the reader does; used by the writers that stream records.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "mpe/log_reader.h"

namespace mpe::interop::detail {

class UserStates {
 public:
  struct Closed {
    uint32_t cat;  // the state's category (its start id)
    int64_t start;
    uint32_t depth;  // among the thread's open user states
  };
  enum class Fed { kBegan, kEnded, kLone };

  explicit UserStates(const log::LogFile& log) : log_(log) {}

  // A user event at time t: begins a state, ends one (*closed), or stands alone.
  Fed feed(uint32_t cat, int64_t t, Closed* closed) {
    const log::Category* c = log_.category(cat);
    if (c && c->kind == log::CategoryKind::kState && c->id == cat) {
      open_.push_back({cat, t});
      return Fed::kBegan;
    }
    for (size_t k = open_.size(); k-- > 0;) {
      const log::Category* sc = log_.category(open_[k].first);
      if (sc && sc->end_id == cat) {
        *closed = Closed{open_[k].first, open_[k].second, static_cast<uint32_t>(k)};
        open_.erase(open_.begin() + static_cast<long>(k));
        return Fed::kEnded;
      }
    }
    return Fed::kLone;
  }
  // The states begun and never ended, (category, start); clears them.
  std::vector<std::pair<uint32_t, int64_t>> take_open() { return std::exchange(open_, {}); }

 private:
  const log::LogFile& log_;
  std::vector<std::pair<uint32_t, int64_t>> open_;
};

}  // namespace mpe::interop::detail
