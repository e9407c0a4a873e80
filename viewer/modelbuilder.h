// The builder of TraceModels, shared by the files that build them: tracebuilder.cpp (the preview
// and the full model) and indexmodels.cpp (the models of a log opened out of core).
#pragma once

#include "tracebuilder.h"

#include "alongside.h"
#include "countertracks.h"
#include "mpe/chunk_pass.h"
#include "mpe/interop.h"
#include "mpe/message_matcher.h"
#include "mpe/view_index.h"
#include <QFileInfo>
#include <algorithm>
#include <malloc.h>
#include <map>
#include <new>
#include <numeric>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>

namespace upshot {

using mpe::format::Event;
using mpe::format::IndexEntry;
using mpe::format::LogFile;
using mpe::format::Record;
using mpe::format::RecordKind;

namespace builder_detail {

// Gives the heap's free pages back to the system: freed small blocks otherwise stay resident.
inline void releaseFreedMemory()
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

// The rows of a model: every (rank, thread) of the index, ordered by rank then thread.
inline std::vector<std::pair<uint32_t, uint32_t>> timelinesOf(const LogFile &file)
{
    std::vector<std::pair<uint32_t, uint32_t>> tl;
    for (const IndexEntry &e : file.index())
        tl.emplace_back(e.rank, e.thread);
    std::sort(tl.begin(), tl.end());
    tl.erase(std::unique(tl.begin(), tl.end()), tl.end());
    return tl;
}

inline size_t rowOf(const std::vector<std::pair<uint32_t, uint32_t>> &timelines, uint32_t rank, uint32_t thread)
{
    return static_cast<size_t>(
        std::lower_bound(timelines.begin(), timelines.end(), std::make_pair(rank, thread)) - timelines.begin());
}

} // namespace builder_detail

using namespace builder_detail;

// Fills a TraceModel from decoded chunks, mirroring mpe::format::load_trace() record by record
// (see log_reader.cpp), but packing states into 12-byte PackedStates per lane as they come.
//
// Invariant: after finish(), the model holds exactly load_trace()'s states (same start, end,
// category, depth and call site), events, matched messages, t_begin and t_end. Memory while building: the
// packed lanes, the events, and one 16-byte entry per message end until the ends are matched,
// queue by queue (each queue is freed once matched).
class ModelBuilder
{
public:
    ModelBuilder(const LogFile &file, TraceModel &model) : m_file(file), m_model(model), m_timelines(timelinesOf(file))
    {
        m_model.m_rows.resize(m_timelines.size());
        m_build.resize(m_timelines.size());
        for (size_t r = 0; r < m_timelines.size(); ++r) {
            m_model.m_rows[r].rank = m_timelines[r].first;
            m_model.m_rows[r].thread = m_timelines[r].second;
        }
        for (const mpe::format::CallSite &site : file.callsites())
            m_model.m_sites.push_back({ site.id, QString::fromStdString(site.text), site.frames });
    }

    // See buildPreview().
    static void preview(const LogFile &file, TraceModel &model)
    {
        ModelBuilder b(file, model);
        std::vector<int64_t> laneEnd(b.m_build.size(), INT64_MIN); // boxes of a lane must not overlap
        for (const IndexEntry &e : file.index()) {
            const size_t tl = rowOf(b.m_timelines, e.rank, e.thread);
            model.m_records += e.nrecords;
            const int64_t t0 = std::max(file.to_ns(e.rank, e.t_first), laneEnd[tl]);
            const int64_t t1 = std::max(t0, file.to_ns(e.rank, e.t_last));
            b.extendSpan(t0, t1);
            int category[kPreviewSlices];
            previewSlices(file, e, t1 - t0, category, model);
            // One box per run of equal slices.
            for (int k = 0; k < kPreviewSlices;) {
                int end = k + 1;
                while (end < kPreviewSlices && category[end] == category[k])
                    ++end;
                const int64_t a = t0 + (t1 - t0) * k / kPreviewSlices, z = t0 + (t1 - t0) * end / kPreviewSlices;
                if (category[k] >= 0 && z > a) addState(b.m_build[tl], 0, a, z - a, category[k]);
                k = end;
            }
            laneEnd[tl] = t1;
        }
        for (size_t r = 0; r < b.m_build.size(); ++r)
            b.packRow(r);
        model.m_tBegin = b.m_tBegin;
        model.m_tEnd = b.m_tEnd;
        model.m_preview = true;
        model.finishRows();
    }

    // Every category of the run, in the index's order: the summary and every window of one log
    // number their categories alike, so the legend's choices (by index) mean the same in each.
    static void registerCategories(const mpe::format::ViewIndex &index, TraceModel &model);
    // See buildSummaryModel(): each row's depth-0 states are the runs of equal bin codes.
    static void summary(const LogFile &file, const mpe::format::ViewIndex &index, TraceModel &model);
    // See buildWindowModel().
    static mpe::Status window(const LogFile &file, const mpe::format::ViewIndex &index, int64_t t0, int64_t t1,
        const BuildProgress &progress, TraceModel &model);

    void addChunk(size_t chunk, const Record *recs, size_t count)
    {
        const IndexEntry &e = m_file.index()[chunk];
        const uint32_t tl = static_cast<uint32_t>(rowOf(m_timelines, e.rank, e.thread));
        struct Sink
        {
            ModelBuilder &b;
            TimelineBuild &T;
            std::vector<Event> &events;
            uint32_t tl;
            int64_t keepFrom, keepTo; // a window keeps what overlaps these (the rank's own clock)
            void state(int64_t start, int64_t end, uint32_t cat, uint32_t depth, uint32_t site)
            {
                if (end < keepFrom || start > keepTo) return;
                addState(T, depth, start, end - start, b.m_model.ensureCategory(cat, true), site);
            }
            void event(const Event &ev)
            {
                if (ev.time >= keepFrom && ev.time <= keepTo) events.push_back(ev);
            }
            void message_end(bool send, const mpe::format::MessageKey &key, int64_t t, uint64_t bytes)
            {
                if (b.m_messagesFromIndex) return;
                if (!send) {
                    b.m_matcher.add_recv(key, MsgEnd { t, tl, 0 }); // a message's size is its send's
                    return;
                }
                uint32_t packed = static_cast<uint32_t>(bytes);
                if (bytes >= kBigBytes) {
                    packed = kBigBytes | static_cast<uint32_t>(b.m_bigBytes.size());
                    b.m_bigBytes.push_back(bytes);
                }
                b.m_matcher.add_send(key, MsgEnd { t, tl, packed });
            }
            void cancel_send(const mpe::format::MessageKey &key)
            {
                if (!b.m_messagesFromIndex) b.m_matcher.cancel_latest_send(key);
            }
            void span(int64_t t, int64_t end)
            {
                ++b.m_model.m_records;
                b.extendSpan(t, end);
            }
        } sink { *this, m_build[tl], m_model.m_rows[tl].events, tl, INT64_MIN, INT64_MAX };
        if (m_keep.second >= m_keep.first && m_index) {
            const int64_t d = m_index->shift_of(e.rank);
            sink.keepFrom = m_keep.first - d;
            sink.keepTo = m_keep.second - d;
        }
        mpe::format::interpret_records(m_file, e, recs, count, &m_build[tl].userStates, sink);
    }

    void finish()
    {
        matchMessages();
        if (m_backward > 0) repairCausality();
        std::sort(m_model.m_messages.begin(), m_model.m_messages.end(),
            [](const Message &a, const Message &b) { return a.send_time < b.send_time; });
        for (size_t r = 0; r < m_build.size(); ++r) {
            packRow(r);
            auto &E = m_model.m_rows[r].events;
            std::stable_sort(E.begin(), E.end(), [](const Event &a, const Event &b) { return a.time < b.time; });
        }
        // After the causality repair, as load_trace() matches them.
        const auto &rows = m_model.m_rows;
        m_model.m_rma = mpe::format::match_rma(
            m_file, static_cast<uint32_t>(rows.size()), [&](uint32_t r) { return rows[r].rank; },
            [&](uint32_t r) -> const std::vector<Event> & { return rows[r].events; });
        m_model.m_tBegin = m_tBegin;
        m_model.m_tEnd = m_tEnd;
        m_model.finishRows();
    }

private:
    // A chunk's preview: its span cut into kPreviewSlices equal slices, each given to one of the
    // chunk's top categories (or left empty) in proportion to that category's share of the span,
    // spread evenly (the next slice goes to whoever is furthest behind its share, the dominant
    // category first). The index says how much time, not when: interleaving shows the mix
    // without suggesting an order the chunk may not have had.
    static constexpr int kPreviewSlices = 16;
    static void previewSlices(const LogFile &file, const IndexEntry &e, int64_t span, int *category, TraceModel &model)
    {
        struct Share
        {
            int category;
            double slices; // owed over the whole chunk
            int given = 0;
        };
        std::vector<Share> shares;
        double owed = 0;
        for (const mpe::format::CategoryTime &slot : e.summary) {
            if (slot.cat == 0xFFFFFFFFu || slot.count == 0 || span <= 0) continue;
            const double n = std::min<double>(kPreviewSlices - owed,
                kPreviewSlices * static_cast<double>(file.duration_ns(e.rank, slot.ticks)) / static_cast<double>(span));
            if (n <= 0) break;
            shares.push_back({ model.ensureCategory(slot.cat, true), n });
            owed += n;
        }
        shares.push_back({ -1, kPreviewSlices - owed }); // no depth-0 state
        for (int k = 0; k < kPreviewSlices; ++k) {
            Share *behind = &shares.front();
            for (Share &sh : shares)
                if (sh.slices * (k + 1) / kPreviewSlices - sh.given
                    > behind->slices * (k + 1) / kPreviewSlices - behind->given)
                    behind = &sh;
            ++behind->given;
            category[k] = behind->category;
        }
    }

    struct Lane
    {
        std::vector<PackedState> states;
        std::vector<std::pair<size_t, int64_t>> longDurations; // (index in the lane, ns)
        // Call site per state, from the first state with a known one on (earlier ones are 0):
        // logs without call sites cost nothing.
        std::vector<uint32_t> sites;
    };
    struct TimelineBuild
    {
        std::vector<Lane> lanes; // by depth
        mpe::format::UserStates userStates;
    };
    // A message end waiting to be matched: 16 bytes. A send's size of 2 GiB or more is kept in
    // m_bigBytes, and bytes is kBigBytes | its index there.
    struct MsgEnd
    {
        int64_t time;
        uint32_t timeline;
        uint32_t bytes;
    };
    static_assert(sizeof(MsgEnd) == 16);
    static constexpr uint32_t kBigBytes = 0x80000000u;

    // Depths beyond this come only from damaged logs; they are drawn in the deepest lane.
    static constexpr uint32_t kMaxDepth = 255;

    static void addState(
        TimelineBuild &T, uint32_t depth, int64_t start, int64_t duration, int category, uint32_t site = 0)
    {
        depth = std::min(depth, kMaxDepth);
        if (T.lanes.size() <= depth) T.lanes.resize(depth + 1);
        Lane &L = T.lanes[depth];
        PackedState s;
        s.setStart(start);
        s.category = static_cast<uint16_t>(category);
        if (duration >= 0 && duration < PackedState::kLongDuration) {
            s.duration = static_cast<uint32_t>(duration);
        } else {
            s.duration = PackedState::kLongDuration;
            L.longDurations.emplace_back(L.states.size(), duration);
        }
        if (site != 0 || !L.sites.empty()) {
            L.sites.resize(L.states.size(), 0);
            L.sites.push_back(site);
        }
        // Lanes grow by a quarter, not double: with many rows each lane is a small heap block,
        // and the unused part of a doubling vector (up to half of it) is resident.
        if (L.states.size() == L.states.capacity()) L.states.reserve(L.states.size() + L.states.size() / 4 + 16);
        L.states.push_back(s);
    }

    void extendSpan(int64_t t, int64_t end)
    {
        if (!m_any || t < m_tBegin) m_tBegin = t;
        if (!m_any || end > m_tEnd) m_tEnd = end;
        m_any = true;
    }

    // The matcher's queues are small heap blocks and the messages one large mapping: the pages
    // of freed queues go back to the system as the messages fill (malloc_trim every 64 MiB of
    // ends), as far as the heap's fragmentation allows (most of them at 16,384 ranks, few at 100,000).
    void matchMessages()
    {
        m_model.m_messages.reserve(m_matcher.pairs());
        size_t freed = 0;
        m_matcher.match(
            [&](const mpe::format::MessageKey &key, const MsgEnd &s, const MsgEnd &r) {
                const uint64_t bytes = s.bytes & kBigBytes ? m_bigBytes[s.bytes & ~kBigBytes] : s.bytes;
                m_model.m_messages.push_back(
                    Message { s.time, r.time, s.timeline, r.timeline, std::get<3>(key), bytes });
                if (r.time < s.time) ++m_backward;
                freed += 2 * sizeof(MsgEnd);
            },
            [&](const mpe::format::MessageKey &, size_t sendsLeft, size_t recvsLeft) {
                freed += (sendsLeft + recvsLeft) * sizeof(MsgEnd);
                if (freed >= (size_t { 64 } << 20)) {
                    releaseFreedMemory();
                    freed = 0;
                }
            });
        std::vector<uint64_t>().swap(m_bigBytes);
    }

    // Clock sync left receives ending before their sends: shift each rank's times as
    // load_trace() does (mpe::format::causality_shifts) and recompute the span from states and events.
    void repairCausality()
    {
        std::map<std::pair<int32_t, int32_t>, int64_t> need;
        auto rankOf = [&](uint32_t tl) { return m_model.m_rows[tl].rank; };
        for (const Message &m : m_model.m_messages)
            mpe::format::add_causality_constraint(&need, static_cast<int32_t>(rankOf(m.send_timeline)),
                static_cast<int32_t>(rankOf(m.recv_timeline)), m.send_time, m.recv_time);
        const std::vector<int64_t> shift = mpe::format::causality_shifts(need, m_file.definitions().world_size);
        for (Message &m : m_model.m_messages) {
            m.send_time += shift[rankOf(m.send_timeline)];
            m.recv_time += shift[rankOf(m.recv_timeline)];
        }
        m_any = false;
        for (size_t r = 0; r < m_build.size(); ++r) {
            const int64_t d = shift[m_model.m_rows[r].rank];
            for (Lane &L : m_build[r].lanes) {
                size_t nextLong = 0;
                for (size_t i = 0; i < L.states.size(); ++i) {
                    PackedState &s = L.states[i];
                    s.setStart(s.start() + d);
                    int64_t dur = s.duration;
                    if (s.duration == PackedState::kLongDuration) dur = L.longDurations[nextLong++].second;
                    extendSpan(s.start(), s.start() + dur);
                }
            }
            for (Event &e : m_model.m_rows[r].events) {
                e.time += d;
                extendSpan(e.time, e.time);
            }
        }
    }

    // Moves row r's states and events by d ns (the index's causality repair).
    void shiftRow(size_t r, int64_t d)
    {
        if (d == 0) return;
        for (Lane &L : m_build[r].lanes)
            for (PackedState &s : L.states)
                s.setStart(s.start() + d);
        for (Event &e : m_model.m_rows[r].events)
            e.time += d;
    }

    // A model drawn from the view index: the run's span, records and per-category totals are the
    // index's (the whole run, whatever part of it the rows hold); messages are `messages`, or the
    // index's sample standing for all of them.
    void finishFromIndex(const mpe::format::ViewIndex &index, std::vector<Message> messages)
    {
        std::sort(messages.begin(), messages.end(),
            [](const Message &a, const Message &b) { return a.send_time < b.send_time; });
        const bool sampled = m_model.m_window.second <= m_model.m_window.first;
        m_model.m_messages = std::move(messages);
        m_model.m_tBegin = index.t_begin();
        m_model.m_tEnd = index.t_end();
        m_model.m_records = index.records();
        m_model.finishRows();
        for (auto &c : m_model.m_categories)
            c.count = 0, c.inclusiveNs = 0, c.exclusiveNs = 0;
        for (const auto &t : index.categories()) {
            // A collective's category is a state's too: its events' entry adds nothing to the time.
            CategoryInfo &c = m_model.m_categories[m_model.ensureCategory(t.id, t.state)];
            c.count += t.count;
            c.inclusiveNs += static_cast<double>(t.inclusive_ns);
            c.exclusiveNs += static_cast<double>(t.exclusive_ns);
        }
        m_model.m_fromIndex = true;
        // The Pcontrol strips run from each marker to the next, however far: the whole run's.
        for (auto &row : m_model.m_rows)
            row.markers.clear();
        for (const auto &mk : index.markers())
            if (mk.timeline < m_model.m_rows.size())
                m_model.m_rows[mk.timeline].markers.push_back({ static_cast<double>(mk.time), mk.level, mk.on });
        if (!sampled) return;
        m_model.m_maxLatency = index.max_latency();
        m_model.m_arrowSampleStride = index.sample_stride();
        m_model.m_arrowSample.clear();
        for (const mpe::format::ViewMessage &m : index.sample())
            m_model.m_arrowSample.push_back({ m.send_time, m.recv_time, m.send_timeline, m.recv_timeline, m.bytes });
    }

    // Moves a timeline's lanes, each sorted by start, into the row's lane-major array.
    void packRow(size_t r)
    {
        TraceModel::Row &row = m_model.m_rows[r];
        std::vector<Lane> &lanes = m_build[r].lanes;
        size_t total = 0;
        bool sited = false;
        for (const Lane &L : lanes) {
            total += L.states.size();
            sited |= !L.sites.empty();
        }
        row.states.reserve(total);
        if (sited) row.sites.reserve(total);
        row.lanes.assign(1, 0);
        for (Lane &L : lanes) {
            sortLane(L);
            const size_t base = row.states.size();
            row.states.insert(row.states.end(), L.states.begin(), L.states.end());
            if (sited) {
                row.sites.insert(row.sites.end(), L.sites.begin(), L.sites.end());
                row.sites.resize(row.states.size(), 0);
            }
            for (const auto &[i, d] : L.longDurations)
                row.longDurations.emplace_back(base + i, d);
            row.lanes.push_back(row.states.size());
            Lane().states.swap(L.states);
            std::vector<uint32_t>().swap(L.sites);
        }
        std::vector<Lane>().swap(lanes);
    }

    // Records come in logged order, which within one depth is start order in every log we know
    // of; a lane that is not gets a stable sort by start (load_trace's order), carrying its long
    // durations and call sites along.
    static void sortLane(Lane &L)
    {
        auto byStart = [](const PackedState &a, const PackedState &b) { return a.start() < b.start(); };
        if (std::is_sorted(L.states.begin(), L.states.end(), byStart)) return;
        std::vector<uint32_t> order(L.states.size());
        std::iota(order.begin(), order.end(), 0u);
        std::stable_sort(
            order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return byStart(L.states[a], L.states[b]); });
        std::vector<PackedState> sorted(L.states.size());
        std::vector<uint32_t> where(L.states.size());
        for (size_t k = 0; k < order.size(); ++k) {
            sorted[k] = L.states[order[k]];
            where[order[k]] = static_cast<uint32_t>(k);
        }
        L.states.swap(sorted);
        if (!L.sites.empty()) {
            L.sites.resize(L.states.size(), 0);
            std::vector<uint32_t> sites(L.sites.size());
            for (size_t k = 0; k < order.size(); ++k)
                sites[k] = L.sites[order[k]];
            L.sites.swap(sites);
        }
        for (auto &[i, d] : L.longDurations)
            i = where[i];
        std::sort(L.longDurations.begin(), L.longDurations.end());
    }

    const LogFile &m_file;
    TraceModel &m_model;
    std::vector<std::pair<uint32_t, uint32_t>> m_timelines;
    std::vector<TimelineBuild> m_build;
    mpe::format::MessageMatcher<MsgEnd> m_matcher;
    std::vector<uint64_t> m_bigBytes; // sizes of 2 GiB or more, in logged order
    uint64_t m_backward = 0;
    int64_t m_tBegin = 0, m_tEnd = 0;
    bool m_any = false;
    bool m_messagesFromIndex = false; // a window's messages come from the view index, paired over the whole run
    const mpe::format::ViewIndex *m_index = nullptr; // a window's: the shifts
    std::pair<int64_t, int64_t> m_keep { 0, -1 }; // a window's span: states and events overlapping it are kept
};

} // namespace upshot
