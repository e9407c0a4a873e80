// Opening a log larger than memory through its view index, and the models of its views.
#include "outofcore.h"

#include <QFileInfo>

#include <algorithm>
#include <cmath>

namespace upshot {

mpe::StatusOr<std::shared_ptr<OutOfCoreLog>> OutOfCoreLog::open(const QString &path, const BuildProgress &progress)
{
    auto opened = mpe::interop::OpenedLog::open(path.toStdString());
    if (!opened.ok()) return opened.status();
    auto log = std::make_shared<OutOfCoreLog>();
    log->m_log = *opened;
    mpe::format::ViewIndexOptions options;
    options.progress = progress;
    auto index = mpe::format::ViewIndex::open_or_build(log->file(), path.toStdString(), options);
    if (!index.ok())
        return index.status().code() == mpe::StatusCode::kCancelled
            ? mpe::Status(mpe::StatusCode::kInvalidArgument, "cancelled")
            : index.status();
    log->m_index = std::move(*index);
    log->m_summary = buildSummaryModel(log->file(), *log->m_index);
    if (log->m_summary->rowCount() > 0) log->m_summary->allRowCounts();
    return log;
}

mpe::StatusOr<bool> OutOfCoreLog::wanted(const QString &path)
{
    auto file = mpe::format::LogFile::open(path.toStdString());
    if (!file.ok())
        return false; // an OTF2 archive (converted in full anyway) or a damaged log: the usual open says why
    uint64_t records = 0;
    for (const auto &e : file->index())
        records += e.nrecords;
    return records > kInMemoryRecords;
}

uint64_t OutOfCoreLog::chunkRecordsIn(double t0, double t1, double *inWindow) const
{
    uint64_t records = 0;
    double share = 0;
    for (const auto &e : file().index()) {
        const double d = static_cast<double>(m_index->shift_of(e.rank));
        const double a = file().to_ns(e.rank, e.t_first) + d, z = file().to_ns(e.rank, e.t_last) + d;
        if (a > t1 || z < t0) continue;
        records += e.nrecords;
        share += z > a ? e.nrecords * (std::min(z, t1) - std::max(a, t0)) / (z - a) : e.nrecords;
    }
    if (inWindow) *inWindow = share;
    return records;
}

bool OutOfCoreLog::windowFits(double t0, double t1) const
{
    double inWindow = 0;
    const uint64_t decoded = chunkRecordsIn(t0, t1, &inWindow);
    return decoded <= m_decodeRecords && inWindow <= m_windowRecords;
}

mpe::StatusOr<std::shared_ptr<TraceModel>> OutOfCoreLog::window(
    double t0, double t1, const BuildProgress &progress) const
{
    return buildWindowModel(
        file(), *m_index, static_cast<int64_t>(std::floor(t0)), static_cast<int64_t>(std::ceil(t1)), progress);
}

mpe::StatusOr<std::shared_ptr<TraceModel>> OutOfCoreLog::modelFor(double t0, double t1) const
{
    if (!windowFits(t0, t1)) return m_summary;
    return window(t0, t1);
}

} // namespace upshot
