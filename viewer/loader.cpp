// The background loader: runs loadModel() on a QThread and posts its results to the GUI thread.
#include "loader.h"

#include <QPointer>
#include <QThread>

namespace upshot {

TraceLoader::TraceLoader(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<std::shared_ptr<upshot::TraceModel>>();
}

TraceLoader::~TraceLoader() = default;

void TraceLoader::load(const QString &path)
{
    const int generation = ++m_generation;
    ++m_running;
    QPointer<TraceLoader> self(this);
    QThread *thread = QThread::create([self, path, generation] {
        auto post = [self](auto fn) {
            if (self) QMetaObject::invokeMethod(self.data(), fn, Qt::QueuedConnection);
        };
        QString error;
        auto model = loadModel(path, &error, [&](int p, const QString &stage) {
            post([self, p, stage, generation] {
                if (self && self->m_generation == generation) emit self->progress(p, stage);
            });
        });
        post([self, model, path, error, generation] {
            if (!self) return;
            --self->m_running;
            if (self->m_generation != generation) return;
            if (model)
                emit self->loaded(model, path);
            else
                emit self->failed(path, error);
        });
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

} // namespace upshot
