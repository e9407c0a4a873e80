// Small known logs for the viewer tests: the same two-rank run as an in-memory Trace and as a
// .mpelog written with the format library's writer.
#pragma once

#include <string>
#include <vector>

#include "mpe/log_reader.h"
#include "mpe/log_writer.h"

namespace testlog {

using namespace mpe::log;

inline Record rec(
    RecordKind k, uint64_t t, uint16_t cat, int32_t a = 0, int32_t b = 0, uint32_t comm = 0, uint64_t c = 0)
{
    return mpe::log::make_record(k, t, cat, a, b, comm, c);
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

// Writes per-rank records as a logfile; returns true on success.
inline bool writeLog(const std::string &path, const std::vector<std::vector<Record>> &ranks)
{
    LogWriter w;
    if (!w.open(path).ok()) return false;
    for (size_t r = 0; r < ranks.size(); ++r) {
        std::string chunk;
        encode_events(ranks[r].data(), static_cast<uint32_t>(ranks[r].size()), static_cast<uint32_t>(r), 0, 1, &chunk);
        if (!w.add_events_chunk(chunk).ok()) return false;
    }
    return w.finish(defs(static_cast<uint32_t>(ranks.size()))).ok();
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

} // namespace testlog
