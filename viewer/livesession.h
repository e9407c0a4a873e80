// upshot's connection to a running job: reads its .live file, subscribes to the relay and decodes
// what arrives into a mpe::live_stream::JobView, on the GUI thread in short bounded polls.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

#include <memory>
#include <string_view>

#include "livemodel.h"
#include "mpe/live_view.h"

namespace mpe::live_stream {
class Subscriber;
}

namespace upshot {

// Owns the job view the live widgets read. A poll every kPollMs takes what the subscriber has
// queued without waiting, at most kMaxMessagesPerPoll messages or kMaxPollMs, so that a flood
// of frames never freezes the window: the rest waits in the subscriber's bounded queue (and what
// overflows it shows as frames lost in transit).
class LiveSession : public QObject
{
    Q_OBJECT
public:
    static constexpr int kPollMs = 50;
    static constexpr int kMaxMessagesPerPoll = 4000;
    static constexpr int kMaxPollMs = 25;

    explicit LiveSession(QObject *parent = nullptr);
    ~LiveSession() override;

    // Reads the .live file and subscribes to its relay, then polls; false with *error when the
    // file cannot be read or the subscription not made. A relay that is not there yet is no
    // error: the subscriber connects when it comes.
    bool attach(const QString &path, QString *error);
    // Stops polling and closes the connection; the job view stays.
    void detach();
    // Decodes one message into the job view: a frame, the job's end, or garbage (counted).
    void ingest(std::string_view message);
    // Takes what has arrived (what the timer does).
    void poll();

    std::shared_ptr<const mpe::live_stream::JobView> job() const { return m_job; }
    QString path() const { return m_path; }
    QString endpoint() const { return m_endpoint; }
    bool attached() const { return m_subscriber != nullptr; }
    uint64_t messages() const { return m_messages; }

signals:
    // New messages went into the job view.
    void updated();
    // The relay said the job ended (once).
    void jobEnded();

private:
    std::shared_ptr<mpe::live_stream::JobView> m_job;
    std::unique_ptr<mpe::live_stream::Subscriber> m_subscriber;
    QTimer m_timer;
    QString m_path, m_endpoint;
    QElapsedTimer m_quiet; // since the last message
    uint64_t m_messages = 0;
    bool m_endSignalled = false;
};

} // namespace upshot
