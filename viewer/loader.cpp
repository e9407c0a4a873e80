// The background loader: builds the preview and the model on a QThread and posts them to the GUI thread.
#include "loader.h"

#include "alongside.h"
#include "mpe/endpoint_collector.h"
#include "mpe/interop.h"
#include "tracebuilder.h"

#include <QPointer>
#include <QThread>

#include <new>
#include <vector>

namespace upshot {

mpe::StatusOr<std::shared_ptr<TraceModel>> openTrace(const mpe::format::LogFile &file, const OpenSteps &steps)
{
    // The analyses' pass 1 rides on the model's pass: no decode of their own.
    std::unique_ptr<mpe::analysis::EndpointCollector> endpoints;
    std::vector<mpe::format::ChunkConsumer> alsoFeed;
    if (steps.waits || steps.rebuiltQueue) {
        mpe::analysis::CollectSettings settings;
        settings.collectives = steps.waits;
        endpoints = std::make_unique<mpe::analysis::EndpointCollector>(file, settings);
        alsoFeed.push_back(endpoints->consumer());
    }
    auto goOn = [&] { return !steps.keepGoing || steps.keepGoing(); };
    // While the model finishes, the analyses match their messages and measure the wait states
    // (which need no model, only its layout does).
    std::shared_ptr<mpe::analysis::Collected> collected;
    mpe::StatusOr<mpe::analysis::waits::Report> report = mpe::Status(mpe::StatusCode::kCancelled, "not analyzed");
    bool outOfMemory = false;
    std::function<void()> analyze;
    if (endpoints)
        analyze = [&] {
            try {
                collected = endpoints->finish();
                endpoints.reset();
                if (steps.waits && goOn())
                    report = mpe::analysis::waits::analyze(file, *collected, waitOverlayOptions());
            } catch (const std::bad_alloc &) {
                outOfMemory = true;
                collected.reset();
                report = mpe::Status::out_of_memory();
            }
        };
    auto built = buildModel(file, steps.progress, 0, alsoFeed, analyze);
    if (!built.ok()) return built.status();
    const std::shared_ptr<TraceModel> model = *built;
    if (steps.modelReady) steps.modelReady(model);
    if (!analyze) return model;
    if (outOfMemory) {
        const mpe::Status oom = mpe::Status::out_of_memory();
        if (steps.waits && steps.waitsReady) steps.waitsReady(oom);
        if (steps.rebuiltQueue && steps.countersReady) steps.countersReady(oom);
        return model;
    }
    // Then the wait states' layout and the rebuilt queue, at once. The queue is rebuilt on this
    // thread, which allocated the endpoints it consumes: the allocator gives their memory back to
    // the thread that allocated it, so the rebuild's own data grows into it (on another thread the
    // peak was 30 MB higher). The results go out from this thread, the wait states first.
    mpe::StatusOr<std::shared_ptr<const WaitStates>> waits = mpe::Status::out_of_memory();
    std::function<void()> layOut;
    if (steps.waits && goOn())
        layOut = [&] {
            try {
                waits = layOutWaits(*model, std::move(report));
            } catch (const std::bad_alloc &) {
                waits = mpe::Status::out_of_memory();
            }
        };
    mpe::StatusOr<std::shared_ptr<CounterTracks>> counters = mpe::Status::out_of_memory();
    runAlongside(layOut, [&] {
        if (!steps.rebuiltQueue || !goOn()) return;
        try {
            counters = withRebuiltQueue(file, *model, model->counters(), std::move(*collected));
        } catch (const std::bad_alloc &) {
            counters = mpe::Status::out_of_memory();
        }
        collected.reset();
    });
    if (layOut && steps.waitsReady) steps.waitsReady(waits);
    if (steps.rebuiltQueue && goOn() && steps.countersReady) steps.countersReady(counters);
    return model;
}

TraceLoader::TraceLoader(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<std::shared_ptr<upshot::TraceModel>>();
    qRegisterMetaType<std::shared_ptr<const upshot::WaitStates>>();
    qRegisterMetaType<std::shared_ptr<upshot::CounterTracks>>();
    qRegisterMetaType<std::shared_ptr<upshot::OutOfCoreLog>>();
}

TraceLoader::~TraceLoader()
{
    ++*m_latest; // cancels a running load
}

void TraceLoader::load(const QString &path)
{
    const int generation = ++m_generation;
    *m_latest = generation;
    std::shared_ptr<std::atomic<int>> latest = m_latest;
    ++m_running;
    QPointer<TraceLoader> self(this);
    const bool analyze = m_analyzeWaits;
    const Memory memory = m_memory;
    QThread *thread = QThread::create([self, path, generation, latest, analyze, memory] {
        auto post = [self](auto fn) {
            if (self) QMetaObject::invokeMethod(self.data(), fn, Qt::QueuedConnection);
        };
        auto finish = [&](const mpe::StatusOr<std::shared_ptr<TraceModel>> &result) {
            const std::shared_ptr<TraceModel> model = result.ok() ? result.value() : nullptr;
            const QString error = QString::fromStdString(result.status().to_string());
            post([self, model, path, error, generation] {
                if (!self) return;
                --self->m_running;
                if (self->m_generation != generation) return;
                if (model)
                    emit self->loaded(model, path);
                else
                    emit self->failed(path, error);
            });
        };
        // An OTF2 archive is converted into a scratch .mpelog that lives as long as `opened`.
        auto opened = mpe::interop::OpenedLog::open(path.toStdString());
        if (!opened.ok()) return finish(opened.status());
        const mpe::format::LogFile *file = &(*opened)->file();
        std::shared_ptr<TraceModel> preview = buildPreview(*file);
        post([self, preview, path, generation] {
            if (self && self->m_generation == generation) emit self->previewReady(preview, path);
        });
        preview.reset();
        const QString stage = QStringLiteral("Decoding %1 chunks").arg(file->index().size());
        // Above kAutoWaitsRecords the analysis's endpoints (~70 B per message end) would more than double the
        // viewer's memory (measured: 1.3 GB -> 3.6 GB at 100 M records), so a big log is analyzed on request only: `mpe
        // waits`, or `upshot --export --waits`. The rebuilt queue has the same budget: its pass 1 is theirs.
        uint64_t records = 0;
        for (const auto &e : file->index())
            records += e.nrecords;
        if (memory == Memory::OutOfCore || (memory == Memory::Auto && OutOfCoreLog::tooBigForMemory(*file))) {
            const QString indexing = QStringLiteral("Indexing %1 records (once; kept beside the log)").arg(records);
            auto big = OutOfCoreLog::open(path, [&](int p) {
                if (*latest != generation) return false;
                post([self, p, indexing, generation] {
                    if (self && self->m_generation == generation) emit self->progress(p, indexing);
                });
                return true;
            });
            if (!big.ok()) return finish(big.status());
            std::shared_ptr<OutOfCoreLog> log = *big;
            post([self, log, path, generation] {
                if (self && self->m_generation == generation) emit self->outOfCore(log, path);
            });
            finish(log->summary());
            const QString why = QStringLiteral("not analyzed for a log opened out of core; run `mpe waits`");
            std::shared_ptr<TraceModel> summary = log->summary();
            post([self, summary, path, why, generation] {
                if (self && self->m_generation == generation) emit self->waitsFailed(summary, path, why);
            });
            return;
        }
        OpenSteps steps;
        steps.waits = steps.rebuiltQueue = analyze && records <= kAutoWaitsRecords;
        // Cancelled (a newer load started, or the loader is gone): stop decoding early.
        steps.progress = [&](int p) {
            if (*latest != generation) return false;
            post([self, p, stage, generation] {
                if (self && self->m_generation == generation) emit self->progress(p, stage);
            });
            return true;
        };
        steps.keepGoing = [&] { return *latest == generation; };
        std::shared_ptr<TraceModel> model;
        steps.modelReady = [&](const std::shared_ptr<TraceModel> &m) {
            model = m;
            finish(m);
        };
        steps.waitsReady = [&](const mpe::StatusOr<std::shared_ptr<const WaitStates>> &waits) {
            const std::shared_ptr<const WaitStates> result = waits.ok() ? waits.value() : nullptr;
            const QString error = QString::fromStdString(waits.status().to_string());
            post([self, model, result, path, error, generation] {
                if (!self || self->m_generation != generation) return;
                if (result)
                    emit self->waitsReady(model, result, path);
                else
                    emit self->waitsFailed(model, path, error);
            });
        };
        // A failure only leaves the rebuilt queue's track out.
        steps.countersReady = [&](const mpe::StatusOr<std::shared_ptr<CounterTracks>> &counters) {
            if (!counters.ok()) return;
            const std::shared_ptr<CounterTracks> tracks = counters.value();
            post([self, model, tracks, path, generation] {
                if (self && self->m_generation == generation) emit self->countersReady(model, tracks, path);
            });
        };
        auto built = openTrace(*file, steps);
        if (!built.ok()) return finish(built.status());
        if (analyze && !steps.waits) {
            const QString why = QStringLiteral("not analyzed automatically above %1 M records (memory); "
                                               "run `mpe waits` or `upshot --export --waits`")
                                    .arg(kAutoWaitsRecords / 1000000);
            post([self, model, path, why, generation] {
                if (self && self->m_generation == generation) emit self->waitsFailed(model, path, why);
            });
        }
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

void TraceLoader::connectTo(const QString &listenFile)
{
    const int generation = ++m_generation;
    *m_latest = generation;
    ++m_running;
    QPointer<TraceLoader> self(this);
    QThread *thread = QThread::create([self, listenFile, generation] {
        auto remote = OutOfCoreLog::connect(listenFile);
        std::shared_ptr<OutOfCoreLog> log = remote.ok() ? *remote : nullptr;
        const QString error = QString::fromStdString(remote.status().to_string());
        if (!self) return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, log, listenFile, error, generation] {
                if (!self) return;
                --self->m_running;
                if (self->m_generation != generation) return;
                if (!log) {
                    emit self->failed(listenFile, error);
                    return;
                }
                emit self->outOfCore(log, listenFile);
                emit self->loaded(log->summary(), listenFile);
            },
            Qt::QueuedConnection);
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

} // namespace upshot
