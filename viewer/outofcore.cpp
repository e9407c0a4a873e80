// Opening a log larger than memory through its view index, and the models of its views.
#include "outofcore.h"

#include "mpe/log_server.h"

#include <QFileInfo>

#include <algorithm>
#include <cmath>

namespace upshot {

mpe::StatusOr<std::shared_ptr<OutOfCoreLog>> OutOfCoreLog::open(
    const QString &path, const BuildProgress &progress, uint64_t sortMemory)
{
    auto opened = mpe::interop::OpenedLog::open(path.toStdString());
    if (!opened.ok()) return opened.status();
    auto log = std::make_shared<OutOfCoreLog>();
    log->m_log = *opened;
    mpe::format::ViewIndexOptions options;
    options.progress = progress;
    if (sortMemory > 0) options.sort_memory = sortMemory;
    auto index = mpe::format::ViewIndex::open_or_build(log->file(), path.toStdString(), options);
    if (!index.ok())
        return index.status().code() == mpe::StatusCode::kCancelled
            ? mpe::Status(mpe::StatusCode::kInvalidArgument, "cancelled")
            : index.status();
    log->m_index = std::move(*index);
    log->m_name = path;
    log->openSummary();
    return log;
}

mpe::StatusOr<std::shared_ptr<OutOfCoreLog>> OutOfCoreLog::connect(const QString &listenFile)
{
    auto serve = mpe::live_stream::read_serve_file(listenFile.toStdString());
    if (!serve.ok()) return serve.status();
    // MPE_SERVE_TIMEOUT_MS: how long a read waits for the server (default 20 s; tests make it short).
    const int timeout = qEnvironmentVariableIntValue("MPE_SERVE_TIMEOUT_MS");
    auto sources = mpe::live_stream::connect_to_server(*serve, timeout > 0 ? timeout : 20000);
    if (!sources.ok()) return sources.status();
    auto file = mpe::format::LogFile::open((*sources)[0]);
    if (!file.ok()) return file.status();
    auto log = std::make_shared<OutOfCoreLog>();
    log->m_remote = std::make_unique<mpe::format::LogFile>(std::move(*file));
    auto index = mpe::format::ViewIndex::open(*log->m_remote, (*sources)[1]);
    if (!index.ok()) return index.status();
    log->m_index = std::move(*index);
    log->m_name = QStringLiteral("%1 (mpe serve at %2)")
                      .arg(QString::fromStdString(serve->log), QString::fromStdString(serve->endpoint));
    log->openSummary();
    return log;
}

void OutOfCoreLog::openSummary()
{
    // UPSHOT_WINDOW_RECORDS: another kWindowRecords (less memory per view, or a test's small log).
    if (const qint64 w = qEnvironmentVariableIntValue("UPSHOT_WINDOW_RECORDS"); w > 0)
        m_windowRecords = static_cast<uint64_t>(w);
    m_summary = buildSummaryModel(file(), *m_index);
    if (m_summary->rowCount() > 0) m_summary->allRowCounts();
}

bool OutOfCoreLog::tooBigForMemory(const mpe::format::LogFile &file)
{
    uint64_t records = 0;
    for (const auto &e : file.index())
        records += e.nrecords;
    return records > kInMemoryRecords;
}

bool OutOfCoreLog::wanted(const QString &path)
{
    // An OTF2 archive (converted in full anyway) or a damaged log: the usual open says why.
    auto file = mpe::format::LogFile::open(path.toStdString());
    return file.ok() && tooBigForMemory(*file);
}

uint64_t OutOfCoreLog::chunkRecordsIn(double t0, double t1, double *inWindow) const
{
    uint64_t records = 0;
    double share = 0;
    for (size_t i = 0; i < file().index().size(); ++i) {
        const uint32_t nrecords = file().index()[i].nrecords;
        const auto [first, last] = m_index->chunk_span(file(), i);
        const double a = static_cast<double>(first), z = static_cast<double>(last);
        if (a > t1 || z < t0) continue;
        records += nrecords;
        share += z > a ? nrecords * (std::min(z, t1) - std::max(a, t0)) / (z - a) : nrecords;
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
