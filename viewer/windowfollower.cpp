// Reads the records of the view of a log opened out of core, off the GUI thread.
#include "windowfollower.h"

#include <QPointer>
#include <QThread>

namespace upshot {

WindowFollower::WindowFollower(QObject *parent) : QObject(parent)
{
    m_rest.setSingleShot(true);
    m_rest.setInterval(kRestMs);
    connect(&m_rest, &QTimer::timeout, this, &WindowFollower::settle);
}

WindowFollower::~WindowFollower() = default;

void WindowFollower::setLog(std::shared_ptr<OutOfCoreLog> log)
{
    *m_latest = ++m_generation; // a read under way stops
    m_reading = false;
    m_log = std::move(log);
    m_current = m_log ? m_log->summary() : nullptr;
    m_rest.stop();
}

void WindowFollower::viewChanged(double t0, double t1)
{
    m_t0 = t0;
    m_t1 = t1;
    if (m_log) m_rest.start();
}

void WindowFollower::settle()
{
    if (!m_log || m_reading) return; // a read under way settles again when it ends
    const bool fits = m_log->windowFits(m_t0, m_t1);
    if (!fits) {
        if (m_current != m_log->summary()) {
            m_current = m_log->summary();
            emit modelChanged(m_current);
        }
        return;
    }
    const auto held = m_current ? m_current->window() : std::make_pair(0.0, 0.0);
    if (held.second > held.first && held.first <= m_t0 && held.second >= m_t1) return; // already read
    const double margin = m_t1 - m_t0;
    const double a = std::max(m_log->summary()->tBegin(), m_t0 - margin);
    const double z = std::min(m_log->summary()->tEnd(), m_t1 + margin);
    const bool wide = m_log->windowFits(a, z); // the margin only when it fits too
    const double from = wide ? a : m_t0, to = wide ? z : m_t1;
    m_reading = true;
    const int generation = m_generation;
    emit reading(true, tr("Reading the records of %1 – %2").arg(formatDuration(from), formatDuration(to)));
    QPointer<WindowFollower> self(this);
    std::shared_ptr<OutOfCoreLog> log = m_log;
    QThread *thread = QThread::create([self, log, from, to, generation] {
        auto built
            = log->window(from, to, [self, generation](int) { return self && self->m_generation == generation; });
        std::shared_ptr<TraceModel> model = built.ok() ? *built : nullptr;
        const QString error = built.ok() ? QString() : QString::fromStdString(built.status().to_string());
        if (!self) return; // the window closed meanwhile
        QMetaObject::invokeMethod(
            self.data(),
            [self, generation, model, error] {
                if (self) self->windowRead(generation, model, error);
            },
            Qt::QueuedConnection);
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}

void WindowFollower::windowRead(int generation, std::shared_ptr<TraceModel> model, const QString &error)
{
    if (generation != m_generation) return;
    m_reading = false;
    emit reading(false, error.isEmpty() ? QString() : tr("Could not read the view's records: %1").arg(error));
    if (!model) return; // said once; the next move of the view tries again
    m_current = std::move(model);
    emit modelChanged(m_current);
    settle(); // the view may have moved on while reading
}

} // namespace upshot
