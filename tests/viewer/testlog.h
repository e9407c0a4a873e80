// Small known logs for the viewer tests: the same two-rank run as an in-memory Trace and as a
// .mpelog written with the format library's writer.
#pragma once

#include <string>
#include <vector>

#include "mpe/log_reader.h"
#include "mpe/log_writer.h"

namespace testlog {

using namespace mpe::format;

inline Record rec(
    RecordKind k, uint64_t t, uint16_t cat, int32_t a = 0, int32_t b = 0, uint32_t comm = 0, uint64_t c = 0)
{
    return mpe::format::make_record(k, t, cat, a, b, comm, c);
}

// Categories: MPI_Send 0 (0x1E90FF), MPI_Recv 1 (0x32CD32), MPI_Barrier 2 (0xFFD700), and the
// user state "compute" 0x8000..0x8001 (0xFF0000).
inline Definitions defs(uint32_t ranks)
{
    Definitions d;
    d.world_size = ranks;
    d.program = "known";
    d.clock = "monotonic";
    d.ticks_per_second = 1e9;
    d.categories = mpi_categories({ "MPI_Send", "MPI_Recv", "MPI_Barrier" });
    for (uint32_t r = 0; r < ranks; ++r) {
        RankMeta m;
        m.rank = r;
        m.world_size = ranks;
        m.host = "h";
        m.threads = { ThreadDef { 0, 100 + r } };
        std::vector<int32_t> world;
        for (uint32_t k = 0; k < ranks; ++k)
            world.push_back(static_cast<int32_t>(k));
        m.comms = { CommDef { 0, 0, false, world }, CommDef { 1, 1000 + r, false, { static_cast<int32_t>(r) } } };
        m.user_categories
            = { Category { kUserCategoryBase, CategoryKind::kState, kUserCategoryBase + 1u, 0xFF0000, "compute" } };
        d.ranks.push_back(m);
    }
    merge_user_categories(&d);
    return d;
}

// Rank 0: compute [0,400] holding MPI_Barrier [100,200] at depth 1; MPI_Send [500,600] sending
// 64 bytes, tag 7, to rank 1. Rank 1: MPI_Recv [300,800] completing at 800; MPI_Pcontrol(2) at
// 820; compute [850,1000]. Times in ns (1 tick = 1 ns).
inline std::vector<std::vector<Record>> knownRecords()
{
    const uint16_t U = kUserCategoryBase;
    std::vector<Record> r0 = { rec(RecordKind::kUserEvent, 0, U), rec(RecordKind::kState, 100, 2, 1, 0, 0, 100),
        rec(RecordKind::kUserEvent, 400, U + 1), rec(RecordKind::kState, 500, 0, 0, 0, 0, 100),
        rec(RecordKind::kSend, 500, 0, 1, 7, 0, 64) };
    std::vector<Record> r1 = { rec(RecordKind::kState, 300, 1, 0, 0, 0, 500),
        rec(RecordKind::kRecv, 800, 1, 0, 7, 0, 64), rec(RecordKind::kMarker, 820, 0, 2, 1),
        rec(RecordKind::kUserEvent, 850, U), rec(RecordKind::kUserEvent, 1000, U + 1) };
    return { r0, r1 };
}

// Writes per-rank records as a logfile with definitions d; returns true on success.
inline bool writeLog(const std::string &path, const std::vector<std::vector<Record>> &ranks, const Definitions &d)
{
    LogWriter w;
    if (!w.open(path).ok()) return false;
    for (size_t r = 0; r < ranks.size(); ++r) {
        std::string chunk;
        encode_events(ranks[r].data(), static_cast<uint32_t>(ranks[r].size()), static_cast<uint32_t>(r), 0, 1, &chunk);
        if (!w.add_events_chunk(chunk).ok()) return false;
    }
    return w.finish(d).ok();
}

inline bool writeLog(const std::string &path, const std::vector<std::vector<Record>> &ranks)
{
    return writeLog(path, ranks, defs(static_cast<uint32_t>(ranks.size())));
}

inline bool writeKnownLog(const std::string &path)
{
    return writeLog(path, knownRecords());
}

// One rank with n MPI_Send/MPI_Recv states of 10 ns every 20 ns, then one wide MPI_Barrier.
inline std::vector<std::vector<Record>> denseRecords(int n)
{
    std::vector<Record> r;
    for (int i = 0; i < n; ++i)
        r.push_back(rec(RecordKind::kState, 20ull * i, static_cast<uint16_t>(i % 2), 0, 0, 0, 10));
    r.push_back(rec(RecordKind::kState, 20ull * n, 2, 0, 0, 0, 20ull * n));
    return { r };
}

// A two-rank run with call sites. The run-wide sites, numbered as the reader unifies them (rank
// 0's in its id order, then rank 1's new ones):
//   1 callsites.c:42 (main)                        rank 0 id 1, rank 1 id 3
//   2 csite.c:12 (csite_send) in libcsite.so, called from callsites.c:50 (main)
//                                                  rank 0 id 2, rank 1 id 4
//   3 callsites.c:60 (main)                        rank 0 id 3, rank 1 id 1
//   4 callsites.c:30 (main), the MPE_Log_event starting "compute"   rank 0 id 4
//   5 callsites.c:70 (worker)                      rank 1 id 2
// The ranks' executables load at different addresses (PIE): their frames' offsets differ, their
// lines do not.
inline Definitions callsiteDefs()
{
    Definitions d = defs(2);
    const std::string src = "/src/tests/callsites/", exe = "/build/bin/callsites", so = "/build/lib/libcsite.so";
    auto frame = [&](const char *fn, const char *file, int line, bool lib, uintptr_t off) {
        return mpe::Frame { fn, src + file, line, lib ? so : exe, off };
    };
    for (uint32_t r = 0; r < 2; ++r) {
        const uintptr_t o = 0x1000 * r;
        const std::vector<mpe::Frame> a = { frame("main", "callsites.c", 42, false, 0x1234 + o) };
        const std::vector<mpe::Frame> deep = { frame("csite_send", "csite.c", 12, true, 0x520 + o),
            frame("main", "callsites.c", 50, false, 0x1280 + o) };
        const std::vector<mpe::Frame> b = { frame("main", "callsites.c", 60, false, 0x1300 + o) };
        if (r == 0)
            d.ranks[r].callsites = { CallSiteDef { 1, a }, CallSiteDef { 2, deep }, CallSiteDef { 3, b },
                CallSiteDef { 4, { frame("main", "callsites.c", 30, false, 0x1100) } } };
        else
            d.ranks[r].callsites
                = { CallSiteDef { 1, b }, CallSiteDef { 2, { frame("worker", "callsites.c", 70, false, 0x2400) } },
                      CallSiteDef { 3, a }, CallSiteDef { 4, deep } };
    }
    return d;
}

// Records of the call-site run (b = the rank's own site id; times in ns):
// rank 0: compute [0,400] (site 4) holding MPI_Barrier [100,200] (site 1) at depth 1;
//         MPI_Send [500,600] and [700,730] (site 2) sending 64 bytes (tag 7) and 16 (tag 8) to
//         rank 1; MPI_Barrier [900,1000] (site 3).
// rank 1: MPI_Barrier [200,210] with no site; MPI_Recv [300,800] and [810,850] (site 5);
//         MPI_Barrier [860,1000] (site 3); MPI_Send [1100,1120] (site 2), logged before
//         MPI_Barrier [1010,1050] (site 1): the lane needs sorting.
inline std::vector<std::vector<Record>> callsiteRecords()
{
    const uint16_t U = kUserCategoryBase;
    const uint16_t kSend = 0, kRecv = 1, kBarrier = 2;
    std::vector<Record> r0
        = { rec(RecordKind::kUserEvent, 0, U, 0, 4), rec(RecordKind::kState, 100, kBarrier, 1, 1, 0, 100),
              rec(RecordKind::kUserEvent, 400, U + 1), rec(RecordKind::kState, 500, kSend, 0, 2, 0, 100),
              rec(RecordKind::kSend, 500, 0, 1, 7, 0, 64), rec(RecordKind::kState, 700, kSend, 0, 2, 0, 30),
              rec(RecordKind::kSend, 700, 0, 1, 8, 0, 16), rec(RecordKind::kState, 900, kBarrier, 0, 3, 0, 100) };
    std::vector<Record> r1
        = { rec(RecordKind::kState, 200, kBarrier, 0, 0, 0, 10), rec(RecordKind::kState, 300, kRecv, 0, 2, 0, 500),
              rec(RecordKind::kRecv, 800, 1, 0, 7, 0, 64), rec(RecordKind::kState, 810, kRecv, 0, 2, 0, 40),
              rec(RecordKind::kRecv, 850, 1, 0, 8, 0, 16), rec(RecordKind::kState, 860, kBarrier, 0, 1, 0, 140),
              rec(RecordKind::kState, 1100, kSend, 0, 4, 0, 20), rec(RecordKind::kState, 1010, kBarrier, 0, 3, 0, 40) };
    return { r0, r1 };
}

inline bool writeCallsiteLog(const std::string &path)
{
    return writeLog(path, callsiteRecords(), callsiteDefs());
}

// A two-rank run with known wait states (categories as defs(): MPI_Send 0, MPI_Recv 1,
// MPI_Barrier 2; times in ns):
//   rank 0: compute [0,100] (so that the run starts at 0: the model's times are the log's);
//           MPI_Send [150,200] to rank 1 (tag 3, 64 bytes: eager); MPI_Barrier [300,450].
//   rank 1: MPI_Recv [100,300] from rank 0, completing at 300; MPI_Barrier [400,450], late.
// Waits: Late Sender on rank 1 [100,150] in its MPI_Recv, for rank 0's MPI_Send entered at 150
// (the message 150 -> 300); Wait at Barrier on rank 0 [300,400], for rank 1 entering at 400.
inline std::vector<std::vector<Record>> waitRecords()
{
    const uint16_t kSend = 0, kRecv = 1, kBarrier = 2, U = kUserCategoryBase;
    std::vector<Record> r0 = { rec(RecordKind::kUserEvent, 0, U), rec(RecordKind::kUserEvent, 100, U + 1),
        rec(RecordKind::kState, 150, kSend, 0, 0, 0, 50), rec(RecordKind::kSend, 150, kSend, 1, 3, 0, 64),
        rec(RecordKind::kState, 300, kBarrier, 0, 0, 0, 150),
        rec(RecordKind::kCollective, 300, kBarrier, -1, 0, 0, 0) };
    std::vector<Record> r1 = { rec(RecordKind::kState, 100, kRecv, 0, 0, 0, 200),
        rec(RecordKind::kRecv, 300, kRecv, 0, 3, 0, 64), rec(RecordKind::kState, 400, kBarrier, 0, 0, 0, 50),
        rec(RecordKind::kCollective, 400, kBarrier, -1, 0, 0, 0) };
    return { r0, r1 };
}

// n Late Senders every 200 ns: rank 1's MPI_Recv [200k, 200k+100] waits 40 ns for rank 0's
// MPI_Send [200k+40, 200k+60] (tag 5, 8 bytes).
inline std::vector<std::vector<Record>> denseWaitRecords(int n)
{
    std::vector<Record> r0, r1;
    for (int k = 0; k < n; ++k) {
        const uint64_t t = 200ull * k;
        r0.push_back(rec(RecordKind::kState, t + 40, 0, 0, 0, 0, 20));
        r0.push_back(rec(RecordKind::kSend, t + 40, 0, 1, 5, 0, 8));
        r1.push_back(rec(RecordKind::kState, t, 1, 0, 0, 0, 100));
        r1.push_back(rec(RecordKind::kRecv, t + 100, 1, 0, 5, 0, 8));
    }
    return { r0, r1 };
}

} // namespace testlog
