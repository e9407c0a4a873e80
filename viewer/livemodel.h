// The data side of upshot's live mode: the live timeline's time window, the now table model, the
// traffic matrix and the texts (diagnosis, status, summary) derived from a mpe::live_stream::JobView.
#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <QString>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "mpe/live_view.h"
#include "timescale.h"

namespace upshot {

// Which span of a live job the live timeline shows: the last span() ns up to the newest data
// ("following now"), or, once paused, a fixed span the user scrolls back through. Times are ns
// since the epoch (as the ranks' frames carry them); a plain value type, testable without a window.
class LiveTimeWindow
{
public:
    static constexpr double kMinSpan = 5e9, kMaxSpan = 300e9, kDefaultSpan = 30e9;

    double span() const { return m_span; }
    // Sets the width of the window, clamped to [kMinSpan, kMaxSpan]; a paused window keeps its end.
    void setSpan(double ns) { m_span = std::clamp(ns, kMinSpan, kMaxSpan); }
    bool following() const { return !m_paused; }
    // Stops following: the window stays where it is at nowNs.
    void pause(double nowNs)
    {
        if (m_paused) return;
        m_paused = true;
        m_end = nowNs;
    }
    // Follows now again.
    void resume() { m_paused = false; }
    // Moves the window by dt ns (negative: back in time), pausing it first; its end stays in
    // [oldestNs + span, nowNs] so that it never shows only what was not kept or has not come yet.
    void scroll(double dt, double oldestNs, double nowNs)
    {
        pause(nowNs);
        const double lo = std::min(oldestNs + m_span, nowNs);
        m_end = std::clamp(m_end + dt, lo, nowNs);
    }
    double end(double nowNs) const { return m_paused ? m_end : nowNs; }
    double begin(double nowNs) const { return end(nowNs) - m_span; }
    // The pixel mapping of the window across width pixels.
    TimeScale scale(double nowNs, double width) const { return TimeScale::fit(begin(nowNs), end(nowNs), width); }

    bool operator==(const LiveTimeWindow &o) const = default;

private:
    double m_span = kDefaultSpan;
    bool m_paused = false;
    double m_end = 0;
};

// How many seconds of arrows and states a live job view keeps (the timeline's longest window),
// and of traffic for the matrix of recent traffic.
inline constexpr double kLiveKeepSeconds = LiveTimeWindow::kMaxSpan / 1e9;
inline constexpr double kLiveTrafficSeconds = 5;

// The colour of a state of the live timeline: MPI routines as in a logfile
// (mpe::format::default_mpi_color), the application (routine "") light grey.
QColor liveRoutineColor(const std::string &routine);

// One row per thread of every rank: its current call and how long it has been in it, longest
// first by default (any column sorts). Rows stuck past the threshold have a red background.
class NowTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { Rank, Thread, Routine, CallSite, Peer, Tag, Seconds, ColumnCount };
    static inline const QColor kStuckColor { 255, 190, 190 };

    explicit NowTableModel(QObject *parent = nullptr);
    // Replaces the rows (JobView::now_table()), keeping the sort.
    void setRows(std::vector<mpe::live_stream::NowRow> rows);
    const mpe::live_stream::NowRow &row(int i) const { return m_rows[static_cast<size_t>(i)]; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

private:
    // Sorts rows by the model's sort column and order.
    void sortRows(std::vector<mpe::live_stream::NowRow> &rows) const;

    std::vector<mpe::live_stream::NowRow> m_rows;
    int m_sortColumn = Seconds;
    Qt::SortOrder m_order = Qt::DescendingOrder;
};

// Bytes and messages sent between ranks (JobView::traffic_pairs()), for the traffic matrix: only
// the pairs that sent, so that it stays small at thousands of ranks.
class TrafficMatrix
{
public:
    TrafficMatrix() = default;
    TrafficMatrix(std::vector<mpe::live_stream::PairTraffic> pairs, int ranks);
    int ranks() const { return m_ranks; }
    const std::vector<mpe::live_stream::PairTraffic> &pairs() const { return m_pairs; }
    uint64_t maxBytes() const { return m_maxBytes; }
    // The pair from → to, or null when it sent nothing.
    const mpe::live_stream::PairTraffic *at(int from, int to) const;
    // A cell's colour: white for nothing, then pale to dark blue on a log scale of bytes.
    QColor color(uint64_t bytes) const;

private:
    std::vector<mpe::live_stream::PairTraffic> m_pairs; // sorted by (from, to)
    int m_ranks = 0;
    uint64_t m_maxBytes = 0;
};

// The number of rows of a live timeline or matrix: the world size, or more if a rank beyond it sent.
int liveRankCount(const mpe::live_stream::JobView &job);
// Describes a rank's call for a person: live_stream::call_text, the text mpe top shows too.
QString describeNow(const mpe::live_stream::NowRow &row);
// The diagnosis as text: each deadlock's cycle with each rank's call, call site and peer, then
// each rank holding others; a line saying there is none otherwise.
QString diagnosisText(const mpe::live_stream::Diagnosis &d, double stuckSeconds);
// The status line: ranks seen, what was lost or rejected, whether the job ended.
QString liveStatusText(const mpe::live_stream::JobView &job);
// The summary `upshot --live --export` prints (one line of JSON; see main.cpp):
// {"ranks_seen", "world_size", "ended", "frames_lost", "events_dropped", "rejected",
//  "deadlocks": [[ranks of each cycle]], "stuck": [{"holder", "waiting": [ranks]}]}.
nlohmann::json liveSummary(const mpe::live_stream::JobView &job, double stuckSeconds);

} // namespace upshot
