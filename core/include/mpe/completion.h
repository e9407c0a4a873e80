// Which requests a Wait or Test call completed: the one rule every tool that follows requests uses.
#pragma once

#include "mpe/calls.h"
#include "mpe/tool.h"

namespace mpe {

// The Wait and Test families, the calls that complete requests, as a Tool::enter_classes mask.
inline constexpr uint64_t kCompletingClasses =
    classes(CallClass::kWait, CallClass::kWaitall, CallClass::kWaitany, CallClass::kWaitsome,
            CallClass::kTest, CallClass::kTestall, CallClass::kTestany, CallClass::kTestsome);

// True for the Wait and Test families.
constexpr bool completes_requests(CallClass cls) { return (kCompletingClasses >> static_cast<int>(cls)) & 1; }

// Calls f(index, status) for each request that the Wait/Test-family call `c` completed, in the
// leave hook: index into c.requests as the application passed them, status its completion
// status (may be MPI_STATUS_IGNORE when no tool asked for kNeedsStatus). Honours MPI_UNDEFINED
// from Waitany/Testany/Waitsome/Testsome and a false flag from the Test variants.
template <typename F>
void for_each_completed(const Call& c, F&& f) {
  const bool done = !c.has(role::flag) || *c.flag;
  switch (c.cls) {
    case CallClass::kWait:
    case CallClass::kTest:
      if (done) f(0, c.has(role::status) ? c.status : MPI_STATUS_IGNORE);
      break;
    case CallClass::kWaitany:
    case CallClass::kTestany:
      if (done && c.has(role::index) && *c.index != MPI_UNDEFINED)
        f(*c.index, c.has(role::status) ? c.status : MPI_STATUS_IGNORE);
      break;
    case CallClass::kWaitall:
    case CallClass::kTestall:
      if (done && c.has(role::statuses) && c.statuses != MPI_STATUSES_IGNORE)
        for (int i = 0; i < c.nreq(); ++i) f(i, &c.statuses[i]);
      break;
    case CallClass::kWaitsome:
    case CallClass::kTestsome:
      if (c.has(role::outcount | role::indices | role::statuses) && *c.outcount != MPI_UNDEFINED &&
          c.statuses != MPI_STATUSES_IGNORE)
        for (int k = 0; k < *c.outcount; ++k) f(c.indices[k], &c.statuses[k]);
      break;
    default:
      break;
  }
}

}  // namespace mpe
