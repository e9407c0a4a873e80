// Synthetic live frames for the live-mode tests: a three-rank receive cycle, a rank computing
// while the others wait in MPI_Barrier, and traffic between two ranks.
#pragma once

#include <string>
#include <vector>

#include "mpe/live_view.h"
#include "mpe/live_wire.h"

namespace livejob {

using namespace mpe::live_stream;

// "Now" of the synthetic job, ns since the epoch (as frames carry it).
constexpr uint64_t kNow = 1'700'000'000'000'000'000ull;
constexpr uint64_t kSecond = 1'000'000'000ull;
constexpr uint64_t kInterval = kSecond / 10;

inline CommDef world(uint32_t size)
{
    CommDef c;
    c.key = 1;
    c.label = "MPI_COMM_WORLD";
    c.ranges = { { 0u, size } };
    return c;
}

// A frame of rank for the interval ending at end, with the world as its communicator 0.
inline RankFrame frame(uint32_t rank, uint32_t worldSize, uint64_t seq, uint64_t end = kNow)
{
    RankFrame f;
    f.rank = rank;
    f.world_size = worldSize;
    f.pid = 1000 + rank;
    f.host = "node";
    f.seq = seq;
    f.interval_start_ns = end - kInterval;
    f.interval_end_ns = end;
    f.comms = { world(worldSize) };
    return f;
}

inline ThreadNow recvFrom(int32_t peer, uint64_t since, std::string callsite)
{
    ThreadNow t;
    t.in_mpi = true;
    t.since_ns = since;
    t.routine = "MPI_Recv";
    t.callsite = std::move(callsite);
    t.comm = 0;
    t.peer = peer;
    t.tag = 7;
    t.wait = WaitKind::kAllOf;
    t.peers = { peer };
    return t;
}

inline ThreadNow barrier(uint64_t since)
{
    ThreadNow t;
    t.in_mpi = true;
    t.since_ns = since;
    t.routine = "MPI_Barrier";
    t.callsite = "stuck.c:20 main";
    t.comm = 0;
    t.wait = WaitKind::kCollective;
    return t;
}

inline ThreadNow computing(uint64_t since)
{
    ThreadNow t;
    t.since_ns = since;
    return t;
}

// Rank i receives from rank (i + 1) % 3 at "ring.c:1i main", for 5 s by end: a deadlock.
inline std::vector<RankFrame> cycle3(uint64_t seq = 0, uint64_t end = kNow)
{
    std::vector<RankFrame> frames;
    for (uint32_t r = 0; r < 3; ++r) {
        RankFrame f = frame(r, 3, seq, end);
        f.threads = { recvFrom(
            static_cast<int32_t>((r + 1) % 3), kNow - 5 * kSecond, "ring.c:1" + std::to_string(r) + " main") };
        f.routines = { { "MPI_Recv", kInterval, 0 } };
        f.mpi_ns = kInterval;
        frames.push_back(std::move(f));
    }
    return frames;
}

// Rank 3 computes for 5 s; ranks 0, 1, 2 wait in MPI_Barrier on the world for 4, 3 and 2 s.
inline std::vector<RankFrame> stuck4()
{
    std::vector<RankFrame> frames;
    for (uint32_t r = 0; r < 4; ++r) {
        RankFrame f = frame(r, 4, 0);
        f.threads = { r == 3 ? computing(kNow - 5 * kSecond) : barrier(kNow - (4 - r) * kSecond) };
        if (r != 3) f.routines = { { "MPI_Barrier", kInterval, 0 } };
        frames.push_back(std::move(f));
    }
    return frames;
}

inline TrafficEvent event(EventKind kind, uint64_t t, int32_t peer, uint64_t bytes)
{
    TrafficEvent e;
    e.kind = kind;
    e.t_ns = t;
    e.peer = peer;
    e.tag = 3;
    e.bytes = bytes;
    return e;
}

// Two ranks, two intervals: rank 0 sends to 1 twice (one received, one not yet), computing half
// the time and in MPI_Send the rest; rank 1 in MPI_Recv.
inline std::vector<RankFrame> traffic2()
{
    std::vector<RankFrame> frames;
    for (uint64_t seq = 0; seq < 2; ++seq) {
        const uint64_t end = kNow - (1 - seq) * kInterval;
        RankFrame a = frame(0, 2, seq, end), b = frame(1, 2, seq, end);
        a.threads = { computing(end - kInterval / 4) };
        a.routines = { { "MPI_Send", kInterval / 2, 4 } };
        a.mpi_ns = kInterval / 2;
        b.threads = { recvFrom(0, end - kInterval, "halo.c:5 exchange") };
        b.routines = { { "MPI_Recv", kInterval, 1 } };
        b.mpi_ns = kInterval;
        if (seq == 0) {
            a.events = { event(EventKind::kSend, end - kInterval / 2, 1, 4096) };
            b.events = { event(EventKind::kRecv, end - kInterval / 4, 0, 4096) };
        } else {
            a.events = { event(EventKind::kSend, end - kInterval / 2, 1, 65536) };
        }
        a.sends = a.events.size();
        frames.push_back(std::move(a));
        frames.push_back(std::move(b));
    }
    return frames;
}

// A job view fed frames.
inline void feed(JobView &job, const std::vector<RankFrame> &frames)
{
    for (const RankFrame &f : frames)
        job.add(f);
}

} // namespace livejob
