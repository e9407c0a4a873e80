// upshot's connection to a running job.
#include "livesession.h"

#include <QFileInfo>

#include <QElapsedTimer>

#include "mpe/live_transport.h"
#include "mpe/live_wire.h"

namespace upshot {

LiveSession::LiveSession(QObject *parent)
    : QObject(parent), m_job(std::make_shared<mpe::live_stream::JobView>(kLiveKeepSeconds, kLiveTrafficSeconds))
{
    m_timer.setInterval(kPollMs);
    connect(&m_timer, &QTimer::timeout, this, &LiveSession::poll);
}

LiveSession::~LiveSession() = default;

bool LiveSession::attach(const QString &path, QString *error)
{
    detach();
    auto file = mpe::live_stream::read_live_file(path.toStdString());
    if (!file.ok()) {
        *error = QString::fromStdString(file.status().to_string()); // names the file
        return false;
    }
    auto subscriber = std::make_unique<mpe::live_stream::Subscriber>();
    const mpe::Status connected = subscriber->connect(*file);
    if (!connected.ok()) {
        *error = tr("cannot subscribe to %1: %2")
                     .arg(QString::fromStdString(file->viewer_endpoint), QString::fromStdString(connected.to_string()));
        return false;
    }
    m_subscriber = std::move(subscriber);
    m_path = path;
    m_endpoint = QString::fromStdString(file->viewer_endpoint);
    m_quiet.start();
    m_timer.start();
    return true;
}

void LiveSession::detach()
{
    m_timer.stop();
    m_subscriber.reset();
}

void LiveSession::ingest(std::string_view message)
{
    ++m_messages;
    m_job->ingest(message.data(), message.size());
}

void LiveSession::poll()
{
    if (!m_subscriber) return;
    QElapsedTimer t;
    t.start();
    int n = 0;
    while (n < kMaxMessagesPerPoll && t.elapsed() < kMaxPollMs) {
        const std::optional<std::string> message = m_subscriber->receive(0);
        if (!message) break;
        ingest(*message);
        ++n;
    }
    if (n > 0) m_quiet.restart();
    const bool abandoned = n == 0 && m_quiet.isValid()
        && m_job->end_if_abandoned(QFileInfo::exists(m_path), static_cast<double>(m_quiet.elapsed()) / 1000.0);
    if (n == 0 && !abandoned) return;
    emit updated();
    if (m_job->ended() && !m_endSignalled) {
        m_endSignalled = true;
        emit jobEnded();
    }
}

} // namespace upshot
