// Loads a logfile on a worker thread and reports progress and the result by signals.
#pragma once

#include <QObject>
#include <QString>

#include <memory>

#include "tracemodel.h"

namespace upshot {

class TraceLoader : public QObject
{
    Q_OBJECT
public:
    explicit TraceLoader(QObject *parent = nullptr);
    ~TraceLoader() override;

    // Starts loading path on a worker thread; a load already running is left to finish and its
    // result dropped.
    void load(const QString &path);
    bool isLoading() const { return m_running > 0; }

signals:
    void progress(int percent, const QString &stage);
    void loaded(std::shared_ptr<upshot::TraceModel> model, const QString &path);
    void failed(const QString &path, const QString &error);

private:
    int m_generation = 0;
    int m_running = 0;
};

} // namespace upshot
