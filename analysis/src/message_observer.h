// What the wait-state replay (waits_replay.cpp) tells an observer of its messages: each pair as the
// matcher makes it, and at the end each end left without a partner. `mpe umq`'s streaming rebuild
// (umq.cpp) is one: it needs the same pairs, with their receives' posts, without collecting them.
#pragma once

#include <cstdint>
#include <vector>

#include "endpoints.h"

namespace mpe::analysis {

class MessageObserver {
 public:
  virtual ~MessageObserver() = default;
  // A replay begins on clocks shifted by `shift` (ns per rank; empty: none). What the observer was
  // told by an earlier replay is void: the replay runs again when the causality repair shifts.
  virtual void begin(const std::vector<int64_t>& shift) = 0;
  // A message: its send and receive, and the receive's place in logged order (the replay's seq).
  virtual void paired(const SendEnd& send, const RecvEnd& recv, uint64_t recv_seq) = 0;
  // Ends without a partner, at the end (cancelled sends are not told).
  virtual void unpaired_send(const SendEnd& send) = 0;
  virtual void unpaired_recv(const RecvEnd& recv, uint64_t recv_seq) = 0;
};

}  // namespace mpe::analysis
