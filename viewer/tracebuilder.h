// Builds TraceModels from a logfile: the preview from the chunk index alone (no decoding), and
// the full model by decoding chunks on every core straight into the model's compact arrays.
#pragma once

#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "mpe/chunk_pass.h"
#include "mpe/log_reader.h"
#include "mpe/status.h"
#include "mpe/view_index.h"
#include "tracemodel.h"

namespace upshot {

// The preview: each events chunk's span is cut into 16 slices shared among the chunk's top
// categories by depth-0 time (the index's summary) in proportion to their time, interleaved,
// the dominant category first; slices beyond their total stay empty. No messages or events.
// Cost: O(chunks).
std::shared_ptr<TraceModel> buildPreview(const mpe::format::LogFile &file);

// Called with a percentage (0..100) from the building thread; return false to cancel.
using BuildProgress = std::function<bool(int percent)>;

// A log larger than memory (outofcore.h), drawn from its view index (mpe/view_index.h): each row's
// depth-0 states are the runs of equal bin codes (the category at each bin's centre), the legend's
// totals are the whole run's, and the arrows are the index's sample, each standing for
// sample_stride() messages. No events. Cost: O(rows x bins).
std::shared_ptr<TraceModel> buildSummaryModel(const mpe::format::LogFile &file, const mpe::format::ViewIndex &index);

// The records of [t0, t1] of a log larger than memory: the states and events of the chunks that
// overlap it (decoded on every core) on the index's repaired clocks, the messages crossing it from
// the index (paired over the whole run), the run's span and totals from the index
// (TraceModel::window() says what the rows hold). Errors: a damaged chunk's or block's;
// out-of-memory; invalid-argument "cancelled".
mpe::StatusOr<std::shared_ptr<TraceModel>> buildWindowModel(const mpe::format::LogFile &file,
    const mpe::format::ViewIndex &index, int64_t t0, int64_t t1, const BuildProgress &progress = {});

// The full model: what mpe::format::load_trace() decodes (same states, events, matched messages and
// causality repair), without its 24-byte states and 48-byte messages in between, with the
// counter tracks of its kCounter records. Chunks are decoded once (mpe/chunk_pass.h), on
// `threads` worker threads (0 = one per core), and handed in index order to the model, the
// counter samples and `alsoFeed` (the analyses' endpoints), on the calling thread. Once every
// chunk is consumed, `afterPass` (the caller's work on what alsoFeed collected) runs on a thread
// of its own while the model finishes (message matching, packing), and has returned when
// buildModel does; it is not run when the pass fails. Errors: a damaged chunk's (corrupt,
// truncated, io-error); a cancelled build ends with invalid-argument, "cancelled".
mpe::StatusOr<std::shared_ptr<TraceModel>> buildModel(const mpe::format::LogFile &file,
    const BuildProgress &progress = {}, int threads = 0, const std::vector<mpe::format::ChunkConsumer> &alsoFeed = {},
    const std::function<void()> &afterPass = {});

} // namespace upshot
