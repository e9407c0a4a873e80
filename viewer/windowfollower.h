// Follows the timeline over a log opened out of core (outofcore.h): once the view rests, reads the
// records of the view on a worker thread when they fit, and hands back the model that draws it.
#pragma once

#include <QObject>
#include <QTimer>

#include <atomic>
#include <memory>

#include "outofcore.h"

namespace upshot {

// Design. Every viewChanged() restarts a short timer, so a drag or a wheel zoom reads nothing
// until it stops. Then a view whose records fit (OutOfCoreLog::windowFits) is read with one view's
// width of margin on each side, so that panning within it reads nothing; a view that does not fit
// goes back to the summary. One read runs at a time; a read whose view is gone by the time it
// ends is dropped and the latest view is read. The frame never waits: it paints the model it has.
class WindowFollower : public QObject
{
    Q_OBJECT
public:
    explicit WindowFollower(QObject *parent = nullptr);
    ~WindowFollower() override;
    // The log whose views are followed (null: none; a read under way is dropped).
    void setLog(std::shared_ptr<OutOfCoreLog> log);
    const std::shared_ptr<OutOfCoreLog> &log() const { return m_log; }
    // The timeline shows [t0, t1].
    void viewChanged(double t0, double t1);
    // The model drawing the view now (the summary until a window is read).
    const std::shared_ptr<TraceModel> &current() const { return m_current; }
    bool isReading() const { return m_reading; }

    static constexpr int kRestMs = 150;

signals:
    // The model to draw the view with has changed.
    void modelChanged(std::shared_ptr<upshot::TraceModel> model);
    // A read started (true) or ended (false), for the status line.
    void reading(bool on, const QString &what);

private:
    void settle();
    void windowRead(int generation, std::shared_ptr<TraceModel> model, const QString &error);

    std::shared_ptr<OutOfCoreLog> m_log;
    std::shared_ptr<TraceModel> m_current;
    QTimer m_rest;
    double m_t0 = 0, m_t1 = 0;
    int m_generation = 0;
    // The generation a read's thread compares its own with to stop early (shared: the thread may
    // outlive the follower).
    std::shared_ptr<std::atomic<int>> m_latest = std::make_shared<std::atomic<int>>(0);
    bool m_reading = false;
};

} // namespace upshot
