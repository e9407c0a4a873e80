// Loads a logfile on a worker thread and reports the preview, progress and the result by
// signals; then, on the same thread, analyzes its wait states (waitstates.h).
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>

#include "countertracks.h"
#include "outofcore.h"
#include "tracebuilder.h"
#include "tracemodel.h"
#include "waitstates.h"

namespace upshot {

// What to make ready after the model when a log is opened, and where each result goes. All of it
// comes from one decode of each chunk: the model's pass also collects the analyses' endpoints.
struct OpenSteps
{
    bool waits = true; // the wait states
    bool rebuiltQueue = true; // the unexpected queue rebuilt from the messages, as a counter track
    BuildProgress progress; // the decode's; false cancels it
    std::function<bool()> keepGoing; // asked between the steps after the model: false skips the rest
    // Each result as soon as it is ready, on the opening thread, in this order.
    std::function<void(const std::shared_ptr<TraceModel> &)> modelReady;
    std::function<void(const mpe::StatusOr<std::shared_ptr<const WaitStates>> &)> waitsReady;
    std::function<void(const mpe::StatusOr<std::shared_ptr<CounterTracks>> &)> countersReady;
};

// Builds file's model (tracebuilder.h) and, from the same pass, the steps' analyses, delivered to
// the steps' callbacks. Returns the model. Errors: the model's (an analysis's error goes to its
// callback, and leaves the model usable).
mpe::StatusOr<std::shared_ptr<TraceModel>> openTrace(const mpe::format::LogFile &file, const OpenSteps &steps);

class TraceLoader : public QObject
{
    Q_OBJECT
public:
    explicit TraceLoader(QObject *parent = nullptr);
    ~TraceLoader() override;

    // Starts loading path on a worker thread: first the index preview, then the full model,
    // decoded on all cores, then (when enabled) its wait states. A load already running is
    // cancelled and its results dropped; an analysis already running ends, unheard.
    void load(const QString &path);
    bool isLoading() const { return m_running > 0; }
    // Opens the log `mpe serve` serves, from its listen file (OutOfCoreLog::connect), on a worker
    // thread: outOfCore() then loaded() with its summary, named by listenFile; or failed().
    void connectTo(const QString &listenFile);
    // How logs are opened: out of core above OutOfCoreLog::kInMemoryRecords (Auto), always, or never.
    enum class Memory { Auto, OutOfCore, InMemory };
    void setMemory(Memory m) { m_memory = m; }
    // Whether loads analyze wait states after the model (default on).
    void setAnalyzeWaits(bool on) { m_analyzeWaits = on; }
    bool analyzesWaits() const { return m_analyzeWaits; }

signals:
    void progress(int percent, const QString &stage);
    // The preview from the file's index (TraceModel::isPreview()), before decoding starts.
    void previewReady(std::shared_ptr<upshot::TraceModel> model, const QString &path);
    void loaded(std::shared_ptr<upshot::TraceModel> model, const QString &path);
    // Just before loaded(), for a log opened out of core (outofcore.h): loaded()'s model is its summary.
    void outOfCore(std::shared_ptr<upshot::OutOfCoreLog> log, const QString &path);
    void failed(const QString &path, const QString &error);
    // After loaded(): the wait states of model, or why there are none (the model stays usable).
    void waitsReady(std::shared_ptr<upshot::TraceModel> model, std::shared_ptr<const upshot::WaitStates> waits,
        const QString &path);
    void waitsFailed(std::shared_ptr<upshot::TraceModel> model, const QString &path, const QString &error);
    // After the wait states: model's counter tracks with the unexpected queue rebuilt from the log
    // (countertracks.h), to replace model->counters() on the GUI thread.
    void countersReady(std::shared_ptr<upshot::TraceModel> model, std::shared_ptr<upshot::CounterTracks> counters,
        const QString &path);

private:
    int m_generation = 0;
    // The generation the worker threads compare theirs with to stop early; shared, as a load's
    // thread may outlive the loader.
    std::shared_ptr<std::atomic<int>> m_latest = std::make_shared<std::atomic<int>>(0);
    int m_running = 0;
    bool m_analyzeWaits = true;
    Memory m_memory = Memory::Auto;
    // Logs with more records than this get no automatic wait-state analysis (see loader.cpp).
    static constexpr uint64_t kAutoWaitsRecords = 20000000;
};

} // namespace upshot
