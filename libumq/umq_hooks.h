// libumq's hooks, inline: the library's own wrappers call them directly while it is the only tool
// loaded (mpe/core.h, Solo), and it registers the same functions with the core.
#pragma once

#include "mpe/core.h"
#include "queue_reader.h"

namespace mpe::tools::umq {

struct Hooks {
  static constexpr uint32_t kNeeds = 0;
  // The receive family, whose entry reads the queue, and MPI_Comm_free; after the calls that make
  // communicators.
  static constexpr uint64_t kReceiveClasses = classes(
      CallClass::kRecv, CallClass::kSendrecv, CallClass::kProbe, CallClass::kMprobe, CallClass::kMrecv);
  static constexpr uint64_t kEnterClasses = kReceiveClasses | classes(CallClass::kCommFree);
  static constexpr uint64_t kLeaveClasses = classes(CallClass::kCommCreate);

  static void enter(Call& call, CallClass cls) noexcept {
    if (!g_reading || call.depth > 0) return;
    if (core::in_classes(kReceiveClasses, cls))
      on_receive(call);
    else if (cls == CallClass::kCommFree)
      on_comm_freed(call);
  }
  static void enter(Call& call) noexcept { enter(call, call.cls); }
  // Only for kLeaveClasses, on either path: no class test here.
  static void leave(Call& call) noexcept {
    if (g_reading && call.depth == 0) on_comm_created(call);
  }
};

}  // namespace mpe::tools::umq
