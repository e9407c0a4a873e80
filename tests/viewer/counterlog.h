// A known two-rank log with MPI_T counter records (format v4), for the counter-track tests.
//   Rank 0: compute [0, 50] (the run starts at 0), MPI_Send [100, 200] sending 64 bytes, tag 7, to rank 1 (its entry at
//   100); counter "unexpected_recvq_length" (class level, local id 0): 3 at 150, 5 at 250, 0 at 600. Rank 1: MPI_Recv
//   [300, 500] completing at 500; counter "bytes_received" (class counter, deltas, local id 0 there, run-wide id 2):
//   +64 at 400, +36 at 700 (levels 64, 100); a compute state [700, 1000]. The rebuilt queue of rank 1: the message is
//   queued from its send's start (100) to the receive's post (300): length 1 on [100, 300), 0 from 300.
#pragma once

#include "testlog.h"
#include "tracemodel.h"

#include <QString>

namespace counterlog {

using namespace mpe::format;

inline CounterDef counter(uint32_t id, const char *name, mpe::PvarClass cls)
{
    CounterDef c;
    c.id = id;
    c.name = name;
    c.description = std::string("test variable ") + name;
    c.datatype = "MPI_UNSIGNED_LONG_LONG";
    c.cls = cls;
    c.semantics = mpe::pvar_semantics(cls);
    return c;
}

inline Definitions defs()
{
    Definitions d = testlog::defs(2);
    d.ranks[0].counters = { counter(0, "unexpected_recvq_length", mpe::PvarClass::kLevel) };
    d.ranks[1].counters = { counter(0, "bytes_received", mpe::PvarClass::kCounter) };
    return d;
}

inline Record sample(uint64_t t, uint16_t local, uint64_t value)
{
    return testlog::rec(RecordKind::kCounter, t, local, -1, 0, kUnknownComm, value);
}

inline std::vector<std::vector<Record>> records()
{
    using testlog::rec;
    const uint16_t U = kUserCategoryBase;
    std::vector<Record> r0 = { rec(RecordKind::kUserEvent, 0, U), rec(RecordKind::kUserEvent, 50, U + 1),
        rec(RecordKind::kState, 100, 0, 0, 0, 0, 100), rec(RecordKind::kSend, 100, 0, 1, 7, 0, 64), sample(150, 0, 3),
        sample(250, 0, 5), sample(600, 0, 0) };
    std::vector<Record> r1 = { rec(RecordKind::kState, 300, 1, 0, 0, 0, 200), sample(400, 0, 64),
        rec(RecordKind::kRecv, 500, 1, 0, 7, 0, 64), rec(RecordKind::kUserEvent, 700, U), sample(700, 0, 36),
        rec(RecordKind::kUserEvent, 1000, U + 1) };
    return { r0, r1 };
}

inline bool writeLog(const std::string &path)
{
    return testlog::writeLog(path, records(), defs());
}

// Writes the log as dir/counters.mpelog (*path) and loads its model; null (with the reason in
// *error) on failure.
inline std::shared_ptr<upshot::TraceModel> writeAndLoad(const QString &dir, QString *path, QString *error)
{
    *path = dir + QStringLiteral("/counters.mpelog");
    if (!writeLog(path->toStdString())) {
        *error = QStringLiteral("cannot write ") + *path;
        return nullptr;
    }
    auto loaded = upshot::loadModel(*path);
    *error = QString::fromStdString(loaded.status().to_string());
    return loaded.ok() ? *loaded : nullptr;
}

} // namespace counterlog
