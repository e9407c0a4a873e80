// The background loader: builds the preview and the model on a QThread and posts them to the GUI thread.
#include "loader.h"

#include "mpe/interop.h"
#include "tracebuilder.h"

#include <QPointer>
#include <QThread>

namespace upshot {

TraceLoader::TraceLoader(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<std::shared_ptr<upshot::TraceModel>>();
    qRegisterMetaType<std::shared_ptr<const upshot::WaitStates>>();
    qRegisterMetaType<std::shared_ptr<upshot::CounterTracks>>();
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
    QThread *thread = QThread::create([self, path, generation, latest, analyze] {
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
        const mpe::log::LogFile *file = &(*opened)->file();
        std::shared_ptr<TraceModel> preview = buildPreview(*file);
        post([self, preview, path, generation] {
            if (self && self->m_generation == generation) emit self->previewReady(preview, path);
        });
        preview.reset();
        const QString stage = QStringLiteral("Decoding %1 chunks").arg(file->index().size());
        // Cancelled (a newer load started, or the loader is gone): stop decoding early.
        auto built = buildModel(*file, [&](int p) {
            if (*latest != generation) return false;
            post([self, p, stage, generation] {
                if (self && self->m_generation == generation) emit self->progress(p, stage);
            });
            return true;
        });
        const std::shared_ptr<TraceModel> model = built.ok() ? built.value() : nullptr;
        finish(std::move(built));
        // The wait states, here while the file is open; the analysis cannot be interrupted, so
        // it starts only if the load is still the latest.
        if (!model || !analyze || *latest != generation) return;
        // Above kAutoWaitsRecords the analysis's endpoints (~70 B per message end) would more than double the
        // viewer's memory (measured: 1.3 GB -> 3.6 GB at 100 M records), so a big log is analyzed on request only: `mpe
        // waits`, or `upshot --export --waits`.
        uint64_t records = 0;
        for (const auto &e : file->index())
            records += e.nrecords;
        if (records > kAutoWaitsRecords) {
            const QString why = QStringLiteral("not analyzed automatically above %1 M records (memory); "
                                               "run `mpe waits` or `upshot --export --waits`")
                                    .arg(kAutoWaitsRecords / 1000000);
            post([self, model, path, why, generation] {
                if (self && self->m_generation == generation) emit self->waitsFailed(model, path, why);
            });
            return;
        }
        auto waits = analyzeWaits(*file, *model, [&] { return *latest == generation; });
        const std::shared_ptr<const WaitStates> result = waits.ok() ? waits.value() : nullptr;
        const QString error = QString::fromStdString(waits.status().to_string());
        post([self, model, result, path, error, generation] {
            if (!self || self->m_generation != generation) return;
            if (result)
                emit self->waitsReady(model, result, path);
            else
                emit self->waitsFailed(model, path, error);
        });
        // The unexpected queue rebuilt from the messages, as a counter track (same budget as the
        // wait states: its pass 1 is theirs). A failure only leaves the track out.
        if (*latest != generation) return;
        auto counters = withRebuiltQueue(*file, *model, model->counters(), [&] { return *latest == generation; });
        if (!counters.ok()) return;
        const std::shared_ptr<CounterTracks> tracks = *counters;
        post([self, model, tracks, path, generation] {
            if (self && self->m_generation == generation) emit self->countersReady(model, tracks, path);
        });
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

} // namespace upshot
