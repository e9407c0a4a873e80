// A log larger than memory: opened through its view index (mpe/view_index.h), drawn from the
// index's summary at coarse zoom and from the records of the view's chunks once a view holds few
// enough of them.
#pragma once

#include <QString>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "mpe/interop.h"
#include "mpe/status.h"
#include "mpe/view_index.h"
#include "tracebuilder.h"
#include "tracemodel.h"

namespace upshot {

class OutOfCoreLog
{
public:
    // Logs with more records than this are opened out of core unless asked otherwise: held in
    // memory they would take ~20 B a record (1 GB at 50 M).
    static constexpr uint64_t kInMemoryRecords = 50000000;
    // A view is drawn from its records when it holds at most kWindowRecords of them (about 20 B
    // each in the window's model) and the chunks to decode for them hold at most kDecodeRecords
    // (a few seconds on two cores); a larger one from the summary.
    static constexpr uint64_t kWindowRecords = 8000000;
    static constexpr uint64_t kDecodeRecords = 100000000;

    // Opens path and its view index, building the index (one streaming pass, progress 0..100)
    // when it is missing or stale. Errors: the log's, the index's (io-error when neither beside the
    // log nor in the cache it can be written), invalid-argument "cancelled". sortMemory: the index
    // build's message sort budget in bytes (0: ViewIndexOptions' default).
    static mpe::StatusOr<std::shared_ptr<OutOfCoreLog>> open(
        const QString &path, const BuildProgress &progress = {}, uint64_t sortMemory = 0);
    // Opens the log that `mpe serve` serves, from the listen file it wrote (mpe/log_server.h): the
    // same summary and windows as a local open, read through the server. Errors: the listen
    // file's, the server's (not answering), the log's and the index's.
    static mpe::StatusOr<std::shared_ptr<OutOfCoreLog>> connect(const QString &listenFile);
    // Whether a log has more records than kInMemoryRecords (by its chunk index).
    static bool tooBigForMemory(const mpe::format::LogFile &file);
    // Whether path should be opened out of core: a log that opens and is tooBigForMemory().
    static bool wanted(const QString &path);

    const mpe::format::LogFile &file() const { return m_log ? m_log->file() : *m_remote; }
    // The log's name: its path, or its path on the server and where that is.
    QString name() const { return m_name; }
    const mpe::format::ViewIndex &index() const { return *m_index; }
    // The whole run from the index (buildSummaryModel()), built once.
    std::shared_ptr<TraceModel> summary() const { return m_summary; }
    // From the chunk index, before decoding: the records of the chunks overlapping [t0, t1]
    // (*inWindow: each chunk's share by the part of its span in [t0, t1]).
    uint64_t chunkRecordsIn(double t0, double t1, double *inWindow = nullptr) const;
    // Whether a view of [t0, t1] is drawn from its records (see kWindowRecords).
    bool windowFits(double t0, double t1) const;
    // Other limits than kWindowRecords and kDecodeRecords (tests make them small).
    void setWindowLimits(uint64_t windowRecords, uint64_t decodeRecords)
    {
        m_windowRecords = windowRecords;
        m_decodeRecords = decodeRecords;
    }
    // The model of [t0, t1] (buildWindowModel()).
    mpe::StatusOr<std::shared_ptr<TraceModel>> window(double t0, double t1, const BuildProgress &progress = {}) const;
    // The model that draws a view of [t0, t1]: the window's when it fits, else the summary.
    mpe::StatusOr<std::shared_ptr<TraceModel>> modelFor(double t0, double t1) const;

private:
    // Builds the summary once the file and the index are open.
    void openSummary();

    std::shared_ptr<mpe::interop::OpenedLog> m_log; // a local log
    std::unique_ptr<mpe::format::LogFile> m_remote; // or one read through `mpe serve`
    QString m_name;
    std::unique_ptr<mpe::format::ViewIndex> m_index;
    std::shared_ptr<TraceModel> m_summary;
    uint64_t m_windowRecords = kWindowRecords, m_decodeRecords = kDecodeRecords;
};

} // namespace upshot
