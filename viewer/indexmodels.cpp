// The models of a log opened out of core (outofcore.h): the summary drawn from its view index, and
// the windows read from the chunks of a view.
#include "modelbuilder.h"

#include "countertracks.h"
#include "mpe/chunk_pass.h"
#include "mpe/view_index.h"

#include <algorithm>
#include <cmath>
#include <new>

namespace upshot {

void ModelBuilder::registerCategories(const mpe::format::ViewIndex &index, TraceModel &model)
{
    for (const auto &t : index.categories())
        model.ensureCategory(t.id, t.state);
}

void ModelBuilder::summary(const LogFile &file, const mpe::format::ViewIndex &index, TraceModel &model)
{
    ModelBuilder b(file, model);
    registerCategories(index, model);
    const double o = index.bin_origin(), w = index.bin_width();
    std::vector<int> categoryOfCode { -1 };
    for (uint32_t id : index.code_categories())
        categoryOfCode.push_back(model.ensureCategory(id, true));
    for (size_t r = 0; r < b.m_build.size() && r < index.timelines().size(); ++r) {
        const uint8_t *codes = index.codes(static_cast<uint32_t>(r));
        for (uint32_t k = 0; k < index.bins();) {
            uint32_t end = k + 1;
            while (end < index.bins() && codes[end] == codes[k])
                ++end;
            if (codes[k] != 0 && codes[k] < categoryOfCode.size()) {
                const auto a = static_cast<int64_t>(std::llround(o + k * w));
                const auto z = static_cast<int64_t>(std::llround(o + end * w));
                addState(b.m_build[r], 0, a, z - a, categoryOfCode[codes[k]]);
            }
            k = end;
        }
        b.m_build[r].lanes.resize(std::max<size_t>(1, index.lanes(static_cast<uint32_t>(r))));
        b.packRow(r);
    }
    model.m_preview = false;
    b.finishFromIndex(index, {});
}

mpe::Status ModelBuilder::window(const LogFile &file, const mpe::format::ViewIndex &index, int64_t t0, int64_t t1,
    const BuildProgress &progress, TraceModel &model)
{
    ModelBuilder b(file, model);
    registerCategories(index, model);
    b.m_messagesFromIndex = true;
    b.m_index = &index;
    b.m_keep = { t0, t1 };
    std::vector<size_t> chunks;
    for (size_t i = 0; i < file.index().size(); ++i)
        if (const auto [a, z] = index.chunk_span(file, i); a <= t1 && z >= t0) chunks.push_back(i);
    mpe::format::ChunkPassOptions pass;
    pass.decoders = 0;
    pass.order = &chunks;
    pass.what = "window";
    const size_t n = std::max<size_t>(1, chunks.size());
    pass.keep_going = [&](size_t done) { return !progress || progress(static_cast<int>(90 * done / n)); };
    CounterSampleCollector counterSamples(file);
    std::vector<mpe::format::ChunkConsumer> consumers { [&](const mpe::format::Chunk &c) {
        b.addChunk(c.index, c.records, c.count);
    } };
    if (counterSamples.wanted()) consumers.push_back(counterSamples.consumer());
    const mpe::Status read = mpe::format::run_chunk_pass(file, consumers, pass);
    if (!read.ok()) return read;
    for (size_t r = 0; r < b.m_build.size(); ++r) {
        b.shiftRow(r, index.shift_of(model.m_rows[r].rank));
        // The whole run's lanes, so that boxes are as tall as in a model of the whole run.
        auto &lanes = b.m_build[r].lanes;
        lanes.resize(std::max<size_t>(lanes.size(), index.lanes(static_cast<uint32_t>(r))));
        b.packRow(r);
        auto &E = model.m_rows[r].events;
        std::stable_sort(E.begin(), E.end(), [](const Event &x, const Event &y) { return x.time < y.time; });
    }
    std::vector<Message> messages;
    const mpe::Status crossing = index.messages_crossing(t0, t1, [&](const mpe::format::ViewMessage &m) {
        messages.push_back({ m.send_time, m.recv_time, m.send_timeline, m.recv_timeline, m.tag, m.bytes });
    });
    if (!crossing.ok()) return crossing;
    const auto &rows = model.m_rows;
    model.m_rma = mpe::format::match_rma(
        file, static_cast<uint32_t>(rows.size()), [&](uint32_t r) { return rows[r].rank; },
        [&](uint32_t r) -> const std::vector<Event> & { return rows[r].events; });
    model.m_window = { static_cast<double>(t0), static_cast<double>(t1) };
    b.finishFromIndex(index, std::move(messages));
    model.setCounters(counterSamples.tracks(model));
    return mpe::Status();
}

std::shared_ptr<TraceModel> buildSummaryModel(const LogFile &file, const mpe::format::ViewIndex &index)
{
    auto model = std::make_shared<TraceModel>(file.definitions());
    ModelBuilder::summary(file, index, *model);
    return model;
}

mpe::StatusOr<std::shared_ptr<TraceModel>> buildWindowModel(
    const LogFile &file, const mpe::format::ViewIndex &index, int64_t t0, int64_t t1, const BuildProgress &progress)
{
    try {
        auto model = std::make_shared<TraceModel>(file.definitions());
        const mpe::Status s = ModelBuilder::window(file, index, t0, t1, progress, *model);
        if (!s.ok())
            return s.code() == mpe::StatusCode::kCancelled ? mpe::Status(mpe::StatusCode::kInvalidArgument, "cancelled")
                                                           : s;
        return model;
    } catch (const std::bad_alloc &) {
        return mpe::Status::out_of_memory();
    }
}

} // namespace upshot
