// The one traffic rule: which messages an MPI call starts, delivers or completes, and what a
// request stands for until it completes. liblog, liblive and libmpetime all follow it, so they
// count every message alike (blocking, nonblocking, persistent, partitioned, Sendrecv and
// Isendrecv, Mprobe/Mrecv/Imrecv, cancelled requests, MPI_PROC_NULL, MPI_ANY_SOURCE/ANY_TAG).
#pragma once

#include <mpi.h>

#include <cstdint>

#include "mpe/bytes.h"
#include "mpe/calls.h"
#include "mpe/peer.h"

namespace mpe::traffic {

// A message peer that is not a rank (mpe/peer.h).
inline constexpr int32_t kPeerUnknown = peer::kUnknown;
inline constexpr int32_t kPeerAny = peer::kAnySource;
inline constexpr int32_t kPeerNull = peer::kProcNull;

// A rank argument (dest or source) as a peer: the rank, kPeerAny or kPeerNull.
constexpr int32_t peer_of(int rank) {
  return rank == MPI_ANY_SOURCE ? kPeerAny : rank == MPI_PROC_NULL ? kPeerNull : rank;
}

// What a followed request stands for.
enum class RequestKind : uint8_t {
  kNone = 0,
  kSend,            // a nonblocking send: its message left when it was posted
  kRecv,            // a nonblocking receive: its message arrives when it completes
  kPersistentSend,  // moves its message at each MPI_Start, until freed
  kPersistentRecv,  // receives at each completion, until freed
  kCollective,      // a nonblocking collective
};

constexpr bool receives(RequestKind k) {
  return k == RequestKind::kRecv || k == RequestKind::kPersistentRecv;
}
// Whether completing a request of kind k ends it (a persistent request lives until freed).
constexpr bool ends_at_completion(RequestKind k) {
  return k == RequestKind::kSend || k == RequestKind::kRecv || k == RequestKind::kCollective;
}

// One end of a message, in the ranks of its communicator.
struct Message {
  MPI_Comm comm = MPI_COMM_NULL;
  int32_t peer = kPeerUnknown;  // the destination of a send, the source of a receive
  int32_t tag = MPI_ANY_TAG;
  uint64_t bytes = 0;  // a send's; a posted receive's capacity
};

// What a request was posted as: kept from the call that made it to its completion.
struct Posted {
  RequestKind kind = RequestKind::kNone;
  // MPICH 4.0.2 completes an MPI_Isendrecv(_replace) with an empty status (source 0, tag 0, no
  // bytes): its receive is then what was posted, at the posted capacity.
  bool status_empty = false;
  Message msg;
};

// Mprobe'd messages waiting for their Mrecv/Imrecv, which names no communicator: each thread
// keeps its own, by handle (Call::message_in names the one a receive consumes). An Mprobe of
// MPI_PROC_NULL (MPI_MESSAGE_NO_PROC) keeps none: its receive moves nothing.
class ProbedMessages {
 public:
  void add(MPI_Message m, MPI_Comm comm) {
    for (auto& s : slots_)
      if (s.msg == MPI_MESSAGE_NULL) {
        s = {m, comm};
        return;
      }
  }
  // The communicator `m` was probed on, or MPI_COMM_NULL when the thread did not see it probed
  // (more than 16 outstanding, or probed on another thread).
  MPI_Comm take(MPI_Message m) {
    for (auto& s : slots_)
      if (s.msg == m && m != MPI_MESSAGE_NULL) {
        s.msg = MPI_MESSAGE_NULL;
        return s.comm;
      }
    return MPI_COMM_NULL;
  }

 private:
  // A free slot holds MPI_MESSAGE_NULL, which is not 0 on MPICH.
  struct Slot {
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Comm comm = MPI_COMM_NULL;
  } slots_[16];
};

// True when st says its request was cancelled.
inline bool cancelled(const MPI_Status* st) { return status_cancelled(st); }

// The message a completed receive posted as `p` delivered, from its status (which the core
// makes real when a tool asks for kNeedsStatus); false when it delivered none: cancelled, from
// MPI_PROC_NULL, or unknowable. A receive posted for a specific source or tag matches only that
// one, so the posted values win over the status's (MPICH's Isendrecv reports internal ones).
inline bool delivered(const Posted& p, const MPI_Status* st, Message* out) {
  if (!receives(p.kind) || p.msg.peer == kPeerNull || cancelled(st)) return false;
  const bool real =
      st != nullptr && st != MPI_STATUS_IGNORE && st->MPI_SOURCE >= 0 && st->MPI_SOURCE != MPI_PROC_NULL;
  if (!real && !(p.status_empty && p.msg.peer >= 0)) return false;
  *out = p.msg;
  if (!real) return true;
  if (p.msg.peer < 0) out->peer = st->MPI_SOURCE;
  if (p.msg.tag == MPI_ANY_TAG) out->tag = st->MPI_TAG;
  out->bytes = static_cast<uint64_t>(status_bytes(st));
  if (p.status_empty && out->bytes == 0) out->bytes = p.msg.bytes;
  return true;
}

// A Sink receives the call's traffic (see visit):
//   void send(const Call&, const Message&, const MPI_Request* req)  a message leaves at t_enter;
//        req: a nonblocking send's request, to follow as kSend
//   void recv(const Call&, const Message&)            a blocking call delivered a message at t_leave
//   void post(const Call&, MPI_Request, const Posted&)  a nonblocking receive, or a persistent
//        request, to follow
//   const Posted* find(MPI_Request)                   what the tool follows under a request
//   ProbedMessages& probed()                          the thread's Mprobe'd messages

// Tells `sink` what a successful point-to-point call (send, recv, sendrecv, mprobe, mrecv, start
// classes) moved, in its leave hook; other classes are ignored. The Wait/Test family completes
// requests: for those, a tool checks each completed request with delivered().
template <class Sink>
void visit(const Call& c, Sink& sink) {
  const MPI_Comm comm = c.has(role::comm) ? c.comm : MPI_COMM_NULL;
  const bool blocking = c.mode == Mode::kBlocking;
  auto from_status = [&](MPI_Comm on, const MPI_Status* st, int32_t source, int32_t tag) {
    Posted p{RequestKind::kRecv, false, Message{on, source, tag, 0}};
    Message m;
    if (delivered(p, st, &m)) sink.recv(c, m);
  };
  auto posted_recv = [&](MPI_Comm on, int32_t source, int32_t tag, bool status_empty) {
    const uint64_t capacity = c.has(role::recvcount | role::recvtype) && c.recvcount > 0
                                  ? static_cast<uint64_t>(c.recvcount * type_size(c.recvtype)) *
                                        (c.has(role::partitions) ? c.partitions : 1)
                                  : 0;
    return Posted{c.mode == Mode::kPersistentInit ? RequestKind::kPersistentRecv : RequestKind::kRecv,
                  status_empty, Message{on, source, tag, capacity}};
  };
  const int32_t source = c.has(role::source) ? peer_of(c.source) : kPeerUnknown;
  const int32_t recvtag = c.has(role::recvtag) ? c.recvtag : MPI_ANY_TAG;
  switch (c.cls) {
    case CallClass::kSend: {
      if (!c.has(role::dest) || c.dest == MPI_PROC_NULL) return;
      const Message m{comm, c.dest, c.has(role::sendtag) ? c.sendtag : 0,
                      static_cast<uint64_t>(send_bytes(c))};
      if (c.mode == Mode::kPersistentInit) {
        if (c.has(role::requests)) sink.post(c, *c.requests, Posted{RequestKind::kPersistentSend, false, m});
        return;
      }
      sink.send(c, m, c.mode == Mode::kNonblocking && c.has(role::requests) ? c.requests : nullptr);
      return;
    }
    case CallClass::kRecv:
      if (blocking)
        from_status(comm, c.has(role::status) ? c.status : MPI_STATUS_IGNORE, source, recvtag);
      else if (c.has(role::requests) && source != kPeerNull)
        sink.post(c, *c.requests, posted_recv(comm, source, recvtag, false));
      return;
    case CallClass::kMrecv: {
      // A receive of MPI_MESSAGE_NO_PROC (from an Mprobe of MPI_PROC_NULL) moves nothing.
      if (c.message_in == MPI_MESSAGE_NO_PROC) return;
      const MPI_Status* st = c.has(role::status) ? c.status : MPI_STATUS_IGNORE;
      const MPI_Comm probed = sink.probed().take(c.message_in);
      if (blocking)
        from_status(probed, st, kPeerAny, MPI_ANY_TAG);
      else if (c.has(role::requests))
        sink.post(c, *c.requests, posted_recv(probed, kPeerAny, MPI_ANY_TAG, false));
      return;
    }
    case CallClass::kSendrecv:
      if (c.has(role::dest) && c.dest != MPI_PROC_NULL)
        sink.send(c, Message{comm, c.dest, c.sendtag, static_cast<uint64_t>(send_bytes(c))}, nullptr);
      if (blocking)
        from_status(comm, c.has(role::status) ? c.status : MPI_STATUS_IGNORE, source, recvtag);
      else if (c.has(role::requests) && source != kPeerNull)
        sink.post(c, *c.requests, posted_recv(comm, source, recvtag, true));
      return;
    case CallClass::kMprobe:
      if (c.has(role::message) && *c.message != MPI_MESSAGE_NULL && *c.message != MPI_MESSAGE_NO_PROC &&
          (blocking || (c.has(role::flag) && *c.flag)))
        sink.probed().add(*c.message, comm);
      return;
    case CallClass::kStart:
      if (c.has(role::requests))
        for (int i = 0; i < c.nreq(); ++i)
          if (const Posted* p = c.requests[i] == MPI_REQUEST_NULL ? nullptr : sink.find(c.requests[i]);
              p && p->kind == RequestKind::kPersistentSend)
            sink.send(c, p->msg, nullptr);
      return;
    default:
      return;
  }
}

// Whether visit() has anything to say about calls of class cls.
constexpr bool moves_messages(CallClass cls) {
  return cls == CallClass::kSend || cls == CallClass::kRecv || cls == CallClass::kMrecv ||
         cls == CallClass::kSendrecv || cls == CallClass::kMprobe || cls == CallClass::kStart;
}

}  // namespace mpe::traffic
