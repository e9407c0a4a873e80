// End-to-end tests of `upshot --live run.live --export out.png --after SECONDS`: the upshot
// executable subscribes over CURVE-encrypted ZeroMQ to a stand-in for the relay's viewer side,
// collects what it publishes, and names the deadlock's cycle or the holding rank in its one-line
// JSON summary (what the MPI integration tests read), next to a picture of the live page.
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <zmq.h>

#include "livejob.h"
#include "mpe/live_transport.h"

namespace {

// The relay's viewer side as viewers see it: a CURVE server publishing what it is given.
class FakeRelay
{
public:
    explicit FakeRelay(const mpe::live_stream::KeyPair &server)
    {
        m_context = zmq_ctx_new();
        m_socket = zmq_socket(m_context, ZMQ_PUB);
        const int one = 1, linger = 0;
        zmq_setsockopt(m_socket, ZMQ_CURVE_SERVER, &one, sizeof one);
        zmq_setsockopt(m_socket, ZMQ_CURVE_SECRETKEY, server.secret_key.data(), server.secret_key.size());
        zmq_setsockopt(m_socket, ZMQ_LINGER, &linger, sizeof linger);
        if (zmq_bind(m_socket, "tcp://127.0.0.1:*") != 0) return;
        char endpoint[256] = {};
        size_t len = sizeof endpoint;
        zmq_getsockopt(m_socket, ZMQ_LAST_ENDPOINT, endpoint, &len);
        m_endpoint = endpoint;
    }
    ~FakeRelay()
    {
        zmq_close(m_socket);
        zmq_ctx_term(m_context);
    }
    FakeRelay(const FakeRelay &) = delete;
    FakeRelay &operator=(const FakeRelay &) = delete;
    // The viewer endpoint, or "" when it could not listen.
    const std::string &endpoint() const { return m_endpoint; }
    void publish(const std::string &message) { zmq_send(m_socket, message.data(), message.size(), ZMQ_DONTWAIT); }

private:
    void *m_context = nullptr;
    void *m_socket = nullptr;
    std::string m_endpoint;
};

struct Run
{
    int exitCode = -1;
    QByteArray out, err;
};

} // namespace

class TestLiveExport : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    mpe::live_stream::KeyPair m_server, m_viewer;

    // Writes a .live file for endpoint with the test's keys.
    QString liveFile(const QString &name, const std::string &endpoint)
    {
        mpe::live_stream::LiveFile f;
        f.viewer_endpoint = endpoint;
        f.publish_endpoint = "tcp://127.0.0.1:9";
        f.server_public = m_server.public_key;
        f.viewer = m_viewer;
        const QString path = m_dir.filePath(name);
        return mpe::live_stream::write_live_file(path.toStdString(), f).ok() ? path : QString();
    }

    // Runs upshot with args; while it runs, every 50 ms, publish() is given the tick number.
    static Run runUpshot(const QStringList &args, const std::function<void(uint64_t)> &publish = {})
    {
        QProcess p;
        p.start(QStringLiteral(UPSHOT_EXE), args);
        Run r;
        if (!p.waitForStarted(10000)) return r;
        for (uint64_t tick = 0; p.state() != QProcess::NotRunning && tick < 600; ++tick) {
            if (publish) publish(tick);
            p.waitForFinished(50);
        }
        if (!p.waitForFinished(30000)) p.kill();
        r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
        r.out = p.readAllStandardOutput();
        r.err = p.readAllStandardError();
        return r;
    }

    static QJsonObject summaryOf(const Run &r)
    {
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        return QJsonDocument::fromJson(lines.last()).object();
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        auto server = mpe::live_stream::new_key_pair(), viewer = mpe::live_stream::new_key_pair();
        QVERIFY(server.ok() && viewer.ok());
        m_server = *server;
        m_viewer = *viewer;
    }

    void namesTheHang_data()
    {
        QTest::addColumn<bool>("cycle"); // else a rank computing while three wait in MPI_Barrier
        QTest::newRow("three-rank receive cycle") << true;
        QTest::newRow("rank holding a barrier") << false;
    }
    void namesTheHang()
    {
        QFETCH(bool, cycle);
        FakeRelay relay(m_server);
        QVERIFY(!relay.endpoint().empty());
        const QString path = liveFile(QStringLiteral("hang-%1.live").arg(cycle), relay.endpoint());
        QVERIFY(!path.isEmpty());
        const QString png = m_dir.filePath(QStringLiteral("hang-%1.png").arg(cycle));
        // The ranks' frames every interval, as liblive sends them (those published before the
        // subscription stands are dropped by the publisher, as with the relay).
        const Run r
            = runUpshot({ "--live", path, "--export", png, "--after", "2", "--size", "900x600" }, [&](uint64_t tick) {
                  const uint64_t end = livejob::kNow + tick * livejob::kInterval;
                  std::vector<mpe::live_stream::RankFrame> frames = livejob::cycle3(tick, end);
                  if (!cycle) {
                      frames = livejob::stuck4();
                      for (auto &f : frames) {
                          f.seq = tick;
                          f.interval_start_ns = end - livejob::kInterval;
                          f.interval_end_ns = end;
                      }
                  }
                  for (const auto &f : frames)
                      relay.publish(mpe::live_stream::encode(f));
              });
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject s = summaryOf(r);
        QVERIFY2(!s.isEmpty(), r.out.constData());
        QCOMPARE(s["ranks_seen"].toInt(), cycle ? 3 : 4);
        QCOMPARE(s["world_size"].toInt(), cycle ? 3 : 4);
        QCOMPARE(s["rejected"].toInt(), 0);
        QCOMPARE(s["ended"].toBool(), false);
        if (cycle) {
            QCOMPARE(s["deadlocks"].toArray(), (QJsonArray { QJsonArray { 0, 1, 2 } }));
            QCOMPARE(s["stuck"].toArray().size(), 0);
        } else {
            QCOMPARE(s["deadlocks"].toArray().size(), 0);
            QCOMPARE(s["stuck"].toArray(),
                (QJsonArray { QJsonObject { { "holder", 3 }, { "waiting", QJsonArray { 0, 1, 2 } } } }));
        }
        QCOMPARE(s["image"].toString(), png);
        const QImage img(png);
        QCOMPARE(img.size(), QSize(900, 600));
    }

    void countsGarbageAndSeesTheEnd()
    {
        FakeRelay relay(m_server);
        const QString path = liveFile(QStringLiteral("end.live"), relay.endpoint());
        const QString png = m_dir.filePath(QStringLiteral("end.png"));
        uint64_t garbage = 0;
        const Run r
            = runUpshot({ "--live", path, "--export", png, "--after", "2", "--size", "640x480" }, [&](uint64_t tick) {
                  // Once the subscription surely stands: one garbage message, then the job's end.
                  if (tick == 20) {
                      relay.publish("MPEL but not really a frame");
                      ++garbage;
                  }
                  if (tick == 21) relay.publish(mpe::live_stream::encode(mpe::live_stream::JobEnd { 3, "" }));
              });
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QJsonObject s = summaryOf(r);
        QCOMPARE(s["ended"].toBool(), true);
        QCOMPARE(s["rejected"].toInt(), static_cast<int>(garbage));
        QCOMPARE(s["ranks_seen"].toInt(), 0);
    }

    void nothingToAttachTo()
    {
        // A relay that never answers: an empty summary, not a hang or a crash.
        const QString quiet = liveFile(QStringLiteral("quiet.live"), "tcp://127.0.0.1:9");
        const QString png = m_dir.filePath(QStringLiteral("quiet.png"));
        Run r = runUpshot({ "--live", quiet, "--export", png, "--after", "0.3" });
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(summaryOf(r)["ranks_seen"].toInt(), 0);
        QVERIFY(!QImage(png).isNull());
        // No .live file: one line on stderr, exit status 1, nothing on stdout.
        r = runUpshot({ "--live", m_dir.filePath("missing.live"), "--export", png, "--after", "0" });
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("cannot attach to"), r.err.constData());
        QVERIFY(r.out.isEmpty());
        r = runUpshot({ "--live", quiet, "--export", png, "--after", "soon" });
        QCOMPARE(r.exitCode, 2);
    }
};

QTEST_MAIN(TestLiveExport)
#include "tst_live_export.moc"
