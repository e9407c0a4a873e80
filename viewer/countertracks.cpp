// Counter tracks: loading (logged MPI_T samples, the rebuilt unexpected queue), folding to pixel
// columns, hover text, and the band painter.
#include "countertracks.h"

#include "mpe/log_counters.h"
#include "mpe/umq.h"
#include "renderer.h"
#include "tracemodel.h"

#include <algorithm>
#include <cmath>

namespace upshot {

double CounterTrack::levelAt(double t) const
{
    const auto it = std::upper_bound(
        times.begin(), times.end(), t, [](double x, int64_t s) { return x < static_cast<double>(s); });
    return it == times.begin() ? 0.0 : levels[static_cast<size_t>(it - times.begin()) - 1];
}

const std::vector<int> &CounterTracks::rowTracks(int row) const
{
    static const std::vector<int> none;
    return row >= 0 && static_cast<size_t>(row) < m_rowTracks.size() ? m_rowTracks[static_cast<size_t>(row)] : none;
}

bool CounterTracks::rowHasVisible(int row) const
{
    for (int k : rowTracks(row))
        if (m_counters[static_cast<size_t>(m_tracks[static_cast<size_t>(k)].counter)].visible) return true;
    return false;
}

int CounterTracks::find(const QString &name) const
{
    for (size_t i = 0; i < m_counters.size(); ++i)
        if (m_counters[i].name == name) return static_cast<int>(i);
    return -1;
}

void CounterTracks::addTrack(const TraceModel &model, const CounterInfo &info, uint32_t rank, uint32_t comm,
    std::vector<int64_t> times, std::vector<double> levels)
{
    int c = find(info.name);
    if (c < 0) {
        c = static_cast<int>(m_counters.size());
        m_counters.push_back(info);
        // Colours apart from the states' pastel fills: saturated, dark enough for a 1 px line.
        m_counters.back().color
            = info.rebuilt ? QColor(200, 30, 30) : QColor(QColor::fromHsv((210 + c * 67) % 360, 230, 170).rgb());
        m_counters.back().samples = 0;
        m_counters.back().maxLevel = 0;
    }
    CounterTrack t;
    t.counter = c;
    t.rank = rank;
    t.comm = comm;
    t.row = model.rowOf(rank, 0);
    if (t.row < 0) // a rank whose master thread logged nothing: its first row
        for (int r = 0; r < model.rowCount() && t.row < 0; ++r)
            if (model.rank(r) == rank) t.row = r;
    for (double l : levels) {
        t.maxLevel = std::max(t.maxLevel, l);
        t.minLevel = std::min(t.minLevel, l);
    }
    t.times = std::move(times);
    t.levels = std::move(levels);
    CounterInfo &ci = m_counters[static_cast<size_t>(c)];
    ci.samples += t.times.size();
    ci.maxLevel = std::max(ci.maxLevel, t.maxLevel);
    if (t.row >= 0) {
        if (m_rowTracks.size() <= static_cast<size_t>(t.row)) m_rowTracks.resize(static_cast<size_t>(t.row) + 1);
        m_rowTracks[static_cast<size_t>(t.row)].push_back(static_cast<int>(m_tracks.size()));
    }
    m_tracks.push_back(std::move(t));
}

std::vector<CounterColumn> CounterTracks::columns(
    const CounterTrack &track, int x0, int x1, double t0, double nsPerPixel)
{
    auto timeAt = [&](double x) { return t0 + (x - x0) * nsPerPixel; };
    std::vector<CounterColumn> out;
    const auto &T = track.times;
    // The first sample after the left edge; the level before it holds at the edge.
    size_t i = static_cast<size_t>(std::upper_bound(T.begin(), T.end(), timeAt(x0), [](double x, int64_t s) {
        return x < static_cast<double>(s);
    }) - T.begin());
    double level = i == 0 ? 0.0 : track.levels[i - 1];
    out.push_back(CounterColumn { x0, level, level, level });
    while (i < T.size()) {
        // The pixel column of sample i, then every sample inside that column.
        const int x = static_cast<int>(std::floor(x0 + (static_cast<double>(T[i]) - t0) / nsPerPixel));
        if (x > x1) break;
        const double end = timeAt(x + 1);
        CounterColumn c { std::max(x, x0), level, level, level };
        const size_t j = static_cast<size_t>(std::lower_bound(T.begin() + static_cast<std::ptrdiff_t>(i), T.end(), end,
                                                 [](int64_t s, double e) { return static_cast<double>(s) < e; })
            - T.begin());
        for (size_t k = i; k < std::max(j, i + 1); ++k) {
            c.lo = std::min(c.lo, track.levels[k]);
            c.hi = std::max(c.hi, track.levels[k]);
        }
        i = std::max(j, i + 1);
        level = c.last = track.levels[i - 1];
        out.push_back(c);
    }
    return out;
}

QString CounterTracks::describe(int row, double t) const
{
    QStringList parts;
    for (int k : rowTracks(row)) {
        const CounterTrack &tr = m_tracks[static_cast<size_t>(k)];
        const CounterInfo &c = m_counters[static_cast<size_t>(tr.counter)];
        if (!c.visible) continue;
        QString s = QStringLiteral("%1 = %2").arg(c.name).arg(tr.levelAt(t), 0, 'g', 10);
        if (tr.comm != mpe::format::kUnknownComm) s += QStringLiteral(" (comm %1)").arg(tr.comm);
        parts << s;
    }
    if (parts.isEmpty()) return {};
    return QStringLiteral("%1 at %2").arg(parts.join(QStringLiteral(", ")), formatDuration(t));
}

size_t CounterTracks::memoryBytes() const
{
    size_t n = m_tracks.capacity() * sizeof(CounterTrack);
    for (const CounterTrack &t : m_tracks)
        n += t.times.capacity() * sizeof(int64_t) + t.levels.capacity() * sizeof(double);
    return n;
}

namespace {

// Adds rank's tracks (mpe::format::counter_tracks()) to out.
void addCounterTracks(CounterTracks &out, const TraceModel &model, const mpe::format::Counters &counters, uint32_t rank,
    std::vector<mpe::format::CounterTrack> tracks)
{
    for (mpe::format::CounterTrack &t : tracks) {
        const mpe::format::Counter *c = counters.counter(t.counter);
        if (!c || t.samples.empty()) continue;
        CounterInfo info;
        info.name = QString::fromStdString(c->def.name);
        info.description = QStringLiteral("%1 (MPI_T %2)")
                               .arg(QString::fromStdString(c->def.description),
                                   QString::fromLatin1(mpe::pvar_class_name(c->def.cls)));
        std::vector<int64_t> times;
        std::vector<double> levels;
        times.reserve(t.samples.size());
        levels.reserve(t.samples.size());
        for (const mpe::format::CounterSample &s : t.samples) {
            times.push_back(s.time);
            levels.push_back(s.level);
        }
        out.addTrack(model, info, rank, t.comm, std::move(times), std::move(levels));
    }
}

// `base` (may be null) plus the rebuilt queue's series, one track per rank. Each rank's series
// is freed once it is a track: the peak holds one rank's twice, not every rank's.
std::shared_ptr<CounterTracks> addRebuiltQueue(
    const TraceModel &model, const CounterTracks *base, mpe::analysis::umq::Rebuilt &&rebuilt)
{
    auto out = std::make_shared<CounterTracks>(base ? *base : CounterTracks());
    CounterInfo info;
    info.name = kRebuiltQueueName;
    info.description = QStringLiteral("unexpected-message queue length rebuilt from the log's messages (mpe umq): "
                                      "an estimate, not read from the MPI");
    info.rebuilt = true;
    for (uint32_t rank = 0; rank < rebuilt.series.size(); ++rank) {
        auto &S = rebuilt.series[rank];
        if (S.empty()) continue;
        std::vector<int64_t> times;
        std::vector<double> levels;
        times.reserve(S.size());
        levels.reserve(S.size());
        for (const mpe::analysis::umq::Point &p : S) {
            times.push_back(p.time);
            levels.push_back(p.length);
        }
        std::vector<mpe::analysis::umq::Point>().swap(S);
        out->addTrack(model, info, rank, mpe::format::kUnknownComm, std::move(times), std::move(levels));
    }
    return out;
}

} // namespace

CounterSampleCollector::CounterSampleCollector(const mpe::format::LogFile &file)
    : m_file(file), m_counters(file), m_samples(file.definitions().ranks.size())
{ }

mpe::format::ChunkConsumer CounterSampleCollector::consumer()
{
    return [this](const mpe::format::Chunk &c) {
        if (m_file.version() < mpe::format::kFirstCounterVersion || c.entry.rank >= m_samples.size()) return;
        for (size_t i = 0; i < c.count; ++i)
            if (c.records[i].kind == static_cast<uint8_t>(mpe::format::RecordKind::kCounter))
                m_samples[c.entry.rank].push_back(
                    mpe::format::counter_sample(m_file, m_counters, c.entry.rank, c.entry.thread, c.records[i]));
    };
}

std::shared_ptr<CounterTracks> CounterSampleCollector::tracks(const TraceModel &model)
{
    if (!wanted()) return nullptr;
    auto out = std::make_shared<CounterTracks>();
    for (uint32_t rank = 0; rank < m_samples.size(); ++rank) {
        addCounterTracks(*out, model, m_counters, rank, mpe::format::counter_tracks(m_counters, rank, m_samples[rank]));
        std::vector<mpe::format::CounterSample>().swap(m_samples[rank]);
    }
    return out;
}

mpe::StatusOr<std::shared_ptr<CounterTracks>> withRebuiltQueue(const mpe::format::LogFile &file,
    const TraceModel &model, const CounterTracks *base, std::function<bool()> keepGoing)
{
    mpe::analysis::umq::Options options;
    options.keep_series = true;
    options.keep_going = std::move(keepGoing);
    auto rebuilt = mpe::analysis::umq::rebuild(file, options);
    if (!rebuilt.ok()) return rebuilt.status();
    return addRebuiltQueue(model, base, std::move(*rebuilt));
}

mpe::StatusOr<std::shared_ptr<CounterTracks>> withRebuiltQueue(const mpe::format::LogFile &file,
    const TraceModel &model, const CounterTracks *base, mpe::analysis::Collected &&collected)
{
    mpe::analysis::umq::Options options;
    options.keep_series = true;
    auto rebuilt = mpe::analysis::umq::rebuild(file, std::move(collected), options);
    if (!rebuilt.ok()) return rebuilt.status();
    return addRebuiltQueue(model, base, std::move(*rebuilt));
}

void setCounterRows(ViewState &v, const TraceModel &model)
{
    v.counterRows.assign(static_cast<size_t>(model.rowCount()), 0);
    if (const CounterTracks *C = model.counters())
        for (int r = 0; r < model.rowCount(); ++r)
            v.counterRows[static_cast<size_t>(r)] = C->rowHasVisible(r);
}

size_t paintCounterBands(QPainter &p, const TraceModel &model, const ViewState &v, const std::vector<int> &rows)
{
    const CounterTracks *C = model.counters();
    if (!C) return 0;
    const QRect plot = v.plotRect();
    size_t drawn = 0;
    p.save();
    p.setRenderHint(QPainter::Antialiasing, false);
    for (int r : rows) {
        const double band = v.counterBand(r);
        if (band <= 0) continue;
        const double bottom = v.rowTop(r) + v.rowHeight, top = bottom - band;
        // The band: white, a hairline between it and the states.
        p.fillRect(QRectF(plot.left(), top, plot.width(), band), QColor(255, 255, 255));
        p.setPen(QPen(QColor(190, 190, 200), 0));
        p.drawLine(QPointF(plot.left(), top), QPointF(plot.right(), top));
        const double y0 = top + 1.5, y1 = bottom - 1; // level 0 at y1, the track's max at y0
        for (int k : C->rowTracks(r)) {
            const CounterTrack &t = C->tracks()[static_cast<size_t>(k)];
            const CounterInfo &ci = C->counters()[static_cast<size_t>(t.counter)];
            if (!ci.visible) continue;
            const double span = std::max(t.maxLevel - std::min(0.0, t.minLevel), 1e-300);
            auto yOf = [&](double l) { return y1 - (l - std::min(0.0, t.minLevel)) / span * (y1 - y0); };
            const auto cols = CounterTracks::columns(t, plot.left(), plot.right() + 1, v.timeAt(plot.left()),
                v.timeAt(plot.left() + 1) - v.timeAt(plot.left()));
            p.setPen(QPen(ci.color, 0));
            QPolygonF line;
            for (size_t i = 0; i < cols.size(); ++i) {
                const CounterColumn &c = cols[i];
                const double xEnd = i + 1 < cols.size() ? cols[i + 1].x : plot.right() + 1;
                if (c.hi > c.lo) p.drawLine(QPointF(c.x + 0.5, yOf(c.lo)), QPointF(c.x + 0.5, yOf(c.hi)));
                line << QPointF(c.x, yOf(c.last)) << QPointF(xEnd, yOf(c.last));
            }
            p.drawPolyline(line);
            ++drawn;
        }
    }
    p.restore();
    return drawn;
}

} // namespace upshot
