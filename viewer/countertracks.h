// Counter tracks: MPI_T performance variables sampled by liblog (MPE_LOG_PVARS, mpe/log_counters.h)
// and the unexpected-message queue rebuilt from the log (mpe/umq.h), drawn as step plots in a thin
// band under each rank's row.
//
// Design.
//   A track is one series (counter, rank, communicator) as mpe::format::counter_tracks() gives it:
//   time-sorted (time, level) pairs, the level holding from its time to the next sample, 0 before
//   the first. Tracks are kept as two parallel arrays so the painter's bisections touch only
//   times. The band sits under the states of the rank's first row (ViewState::counterBand()); all
//   visible tracks of the rank share it, each scaled to its own largest level, in its counter's
//   colour. The legend lists the counters (one entry per name, the rebuilt queue apart) and hides
//   or shows them; the hover text gives every visible track's value at the mouse's time.
//
// Cost: a frame draws at most one vertical span (the levels met inside the pixel) and one
// horizontal step per pixel column and track: a bisection per column, then the samples inside it.
// Loading takes the counter records from the pass that builds the model (CounterSampleCollector:
// no decode of its own); the rebuilt queue costs the umq rebuild's pass 2, on endpoints collected
// in that same pass (mpe/endpoint_collector.h).
#pragma once

#include <QColor>
#include <QPainter>
#include <QString>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "mpe/chunk_pass.h"
#include "mpe/endpoint_collector.h"
#include "mpe/log_counters.h"
#include "mpe/log_reader.h"
#include "mpe/status.h"

namespace upshot {

class TraceModel;
struct ViewState;

// A legend entry: one counter of the run (or the rebuilt queue).
struct CounterInfo
{
    QString name; // the MPI_T name, or kRebuiltQueueName
    QString description;
    QColor color;
    bool visible = true;
    bool rebuilt = false; // computed from the log's messages, not read from the MPI
    uint64_t samples = 0; // over every rank
    double maxLevel = 0; // over every rank
};

struct CounterTrack
{
    int counter = 0; // index into CounterTracks::counters()
    uint32_t rank = 0;
    int row = -1; // the rank's first row of the model (its band), -1 when the model has none
    uint32_t comm = mpe::format::kUnknownComm; // rank-local communicator index; unknown = process-wide
    std::vector<int64_t> times; // ns, the model's clock, sorted
    std::vector<double> levels; // the level from times[i] on
    double maxLevel = 0, minLevel = 0;
    // The level at t: that of the last sample at or before t, 0 before the first.
    double levelAt(double t) const;
};

// What the painter draws of one track in a pixel column.
struct CounterColumn
{
    int x; // pixel column (canvas)
    double lo, hi; // the smallest and largest level held inside the column
    double last; // the level at the column's right edge
};

inline const QString kRebuiltQueueName = QStringLiteral("unexpected queue (rebuilt)");

class CounterTracks
{
public:
    const std::vector<CounterInfo> &counters() const { return m_counters; }
    CounterInfo &counter(int i) { return m_counters[static_cast<size_t>(i)]; }
    const std::vector<CounterTrack> &tracks() const { return m_tracks; }
    // The tracks drawn in row's band (indices into tracks()), in counter order.
    const std::vector<int> &rowTracks(int row) const;
    // True when row has a track whose counter is visible: the row then has a band.
    bool rowHasVisible(int row) const;
    // The counter called name, or -1.
    int find(const QString &name) const;

    // Adds the samples of one series; levels[i] holds from times[i] on.
    void addTrack(const TraceModel &model, const CounterInfo &info, uint32_t rank, uint32_t comm,
        std::vector<int64_t> times, std::vector<double> levels);

    // The columns of track between canvas x0 and x1, x0 showing time t0 and a pixel nsPerPixel: the
    // level at x0, then one column per pixel column holding samples (bisection to the next one).
    static std::vector<CounterColumn> columns(const CounterTrack &track, int x0, int x1, double t0, double nsPerPixel);

    // Hover text for row at time t: "name = value" per visible track of the row, "" when none.
    QString describe(int row, double t) const;

    size_t memoryBytes() const;

private:
    std::vector<CounterInfo> m_counters;
    std::vector<CounterTrack> m_tracks;
    std::vector<std::vector<int>> m_rowTracks; // by row
};

// The kCounter records of a log, taken chunk by chunk from a pass that decodes them for the model
// too (mpe/chunk_pass.h), then made into tracks. Memory: the samples until tracks() is called.
class CounterSampleCollector
{
public:
    explicit CounterSampleCollector(const mpe::format::LogFile &file);
    // Whether the log defines counters (else no consumer is needed).
    bool wanted() const { return !m_counters.all().empty(); }
    // Feeds the collector (which must outlive the pass).
    mpe::format::ChunkConsumer consumer();
    // The tracks of the samples collected, null when there are none; empties the collector.
    std::shared_ptr<CounterTracks> tracks(const TraceModel &model);

private:
    const mpe::format::LogFile &m_file;
    mpe::format::Counters m_counters;
    std::vector<std::vector<mpe::format::CounterSample>> m_samples; // per rank, in logged order
};

// `base`'s tracks (may be null) plus, per rank, the unexpected-queue length rebuilt by
// mpe::analysis::umq::rebuild() as a counter kRebuiltQueueName. Errors: the rebuild's (kCancelled when
// keepGoing said stop).
mpe::StatusOr<std::shared_ptr<CounterTracks>> withRebuiltQueue(const mpe::format::LogFile &file,
    const TraceModel &model, const CounterTracks *base, std::function<bool()> keepGoing = {});
// The same from endpoints collected in the pass that built the model (consumed).
mpe::StatusOr<std::shared_ptr<CounterTracks>> withRebuiltQueue(const mpe::format::LogFile &file,
    const TraceModel &model, const CounterTracks *base, mpe::analysis::Collected &&collected);

// Fills v.counterRows from model's tracks: the rows with a visible track get a band.
void setCounterRows(ViewState &v, const TraceModel &model);

// Paints the bands of the given rows (those ViewState::counterBand() gives room to).
// Returns the tracks drawn.
size_t paintCounterBands(QPainter &p, const TraceModel &model, const ViewState &v, const std::vector<int> &rows);

} // namespace upshot
