// Loads a logfile on a worker thread and reports the preview, progress and the result by
// signals; then, on the same thread, analyzes its wait states (waitstates.h).
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

#include "countertracks.h"
#include "tracemodel.h"
#include "waitstates.h"

namespace upshot {

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
    // Whether loads analyze wait states after the model (default on).
    void setAnalyzeWaits(bool on) { m_analyzeWaits = on; }
    bool analyzesWaits() const { return m_analyzeWaits; }

signals:
    void progress(int percent, const QString &stage);
    // The preview from the file's index (TraceModel::isPreview()), before decoding starts.
    void previewReady(std::shared_ptr<upshot::TraceModel> model, const QString &path);
    void loaded(std::shared_ptr<upshot::TraceModel> model, const QString &path);
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
    // Logs with more records than this get no automatic wait-state analysis (see loader.cpp).
    static constexpr uint64_t kAutoWaitsRecords = 20000000;
};

} // namespace upshot
