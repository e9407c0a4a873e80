// Image tests of upshot: a small known log renders the expected colours at the expected pixels,
// arrows join the right rows, folds mark dense runs, and `upshot --export` works headless.
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>
#include <map>

#include "renderer.h"
#include "svgexport.h"
#include "testlog.h"
#include "tracebuilder.h"

using namespace upshot;

class TestRender : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::shared_ptr<TraceModel> m_model;
    QString m_path;
    const QSize m_size { 96 + 1000, 28 + 2 * 40 };

    static bool nearColor(const QImage &img, QPointF p, QColor c, int radius = 1)
    {
        for (int dy = -radius; dy <= radius; ++dy)
            for (int dx = -radius; dx <= radius; ++dx) {
                const QPoint q = p.toPoint() + QPoint(dx, dy);
                if (img.rect().contains(q) && img.pixelColor(q) == c) return true;
            }
        return false;
    }

private slots:
    void initTestCase()
    {
        m_path = m_dir.filePath("known.mpelog");
        QVERIFY(testlog::writeKnownLog(m_path.toStdString()));
        QString error;
        m_model = loadModel(m_path, &error);
        QVERIFY2(m_model, qPrintable(error));
    }

    void statesHaveTheirColoursWhereTheyAre_data()
    {
        QTest::addColumn<int>("row");
        QTest::addColumn<int>("depth");
        QTest::addColumn<double>("time");
        QTest::addColumn<QColor>("color");
        QTest::newRow("compute r0") << 0 << 0 << 300.0 << QColor(0xFF0000);
        QTest::newRow("barrier nested in compute") << 0 << 1 << 190.0 << QColor(0xFFD700);
        QTest::newRow("compute around the barrier") << 0 << 0 << 150.0 << QColor(0xFF0000);
        QTest::newRow("send r0") << 0 << 0 << 590.0 << QColor(0x1E90FF);
        QTest::newRow("recv r1") << 1 << 0 << 790.0 << QColor(0x32CD32);
        QTest::newRow("compute r1") << 1 << 0 << 990.0 << QColor(0xFF0000);
    }
    void statesHaveTheirColoursWhereTheyAre()
    {
        QFETCH(int, row);
        QFETCH(int, depth);
        QFETCH(double, time);
        QFETCH(QColor, color);
        const QImage img = renderImage(*m_model, 0, 1000, m_size);
        const ViewState v = fittedView(*m_model, 0, 1000, m_size);
        QCOMPARE(v.rowHeight, 40.0);
        auto [y0, y1] = v.boxY(row, depth);
        // Just inside the top of the box (labels sit in the middle, outlines on the edge); for
        // the parent around a nested box, just inside its own top edge.
        const QPoint p(static_cast<int>(v.xOf(time)), static_cast<int>(y0 + 2.5));
        QCOMPARE(img.pixelColor(p), color);
        // The row's background is elsewhere: before the compute state on row 1.
        if (row == 1) {
            const QPoint bg(static_cast<int>(v.xOf(100)), static_cast<int>(v.rowCenter(1)));
            QVERIFY(img.pixelColor(bg) != color);
        }
    }

    void gapsShowTheRowBackground()
    {
        const QImage img = renderImage(*m_model, 0, 1000, m_size);
        const ViewState v = fittedView(*m_model, 0, 1000, m_size);
        const QColor gap = img.pixelColor(QPoint(static_cast<int>(v.xOf(450)), static_cast<int>(v.rowCenter(0))));
        QCOMPARE(gap, QColor(246, 246, 249));
    }

    // The first frame, from the index alone: the one chunk of a dense log (1000 states of 10 ns
    // alternating MPI_Send/MPI_Recv, then a 20 us MPI_Barrier) paints the barrier at its start
    // and the three categories over about their shares of the chunk (1/2, 1/8, 1/8); the
    // decoded model has the barrier at the end instead.
    void previewPaintsEachChunksCategoriesByTheirShares()
    {
        const QString path = m_dir.filePath("dense-preview.mpelog");
        QVERIFY(testlog::writeLog(path.toStdString(), testlog::denseRecords(1000)));
        auto file = mpe::format::LogFile::open(path.toStdString());
        QVERIFY(file.ok());
        auto preview = buildPreview(*file);
        const QSize size(96 + 1000, 28 + 40);
        const QImage img = renderImage(*preview, 0, 0, size);
        const ViewState v = fittedView(*preview, 0, 0, size);
        const int y = static_cast<int>(v.boxY(0, 0).first) + 3; // under the outline, above any label
        QCOMPARE(img.pixelColor(QPoint(static_cast<int>(v.xOf(1000)), y)), QColor(0xFFD700));
        std::map<QRgb, int> pixels;
        const int x0 = static_cast<int>(v.xOf(0)), x1 = static_cast<int>(v.xOf(40000));
        for (int x = x0; x < x1; ++x)
            ++pixels[img.pixel(x, y) & 0xFFFFFF];
        auto share = [&](QRgb c) { return static_cast<double>(pixels[c]) / (x1 - x0); };
        QVERIFY2(qAbs(share(0xFFD700) - 0.5) < 0.05, qPrintable(QString::number(share(0xFFD700))));
        QVERIFY2(qAbs(share(0x1E90FF) - 0.125) < 0.03, qPrintable(QString::number(share(0x1E90FF))));
        QVERIFY2(qAbs(share(0x32CD32) - 0.125) < 0.03, qPrintable(QString::number(share(0x32CD32))));
        QString error;
        auto full = loadModel(path, &error);
        QVERIFY(full);
        const QImage decoded = renderImage(*full, 0, 0, size);
        QCOMPARE(decoded.pixelColor(QPoint(static_cast<int>(v.xOf(35000)), y)), QColor(0xFFD700));
    }

    void arrowJoinsSenderRowToReceiverRow()
    {
        const QImage img = renderImage(*m_model, 0, 1000, m_size);
        const ViewState v = fittedView(*m_model, 0, 1000, m_size);
        const QPointF a(v.xOf(500), v.rowCenter(0)), b(v.xOf(800), v.rowCenter(1));
        for (double f : { 0.2, 0.35, 0.5, 0.65, 0.8 })
            QVERIFY2(nearColor(img, a + (b - a) * f, arrowColor()), qPrintable(QString::number(f)));
        // Nothing on the mirrored line (receiver to sender) nor on a flat line within row 0.
        const QPointF ma(v.xOf(500), v.rowCenter(1)), mb(v.xOf(800), v.rowCenter(0));
        for (double f : { 0.2, 0.8 })
            QVERIFY(!nearColor(img, ma + (mb - ma) * f, arrowColor()));
        QVERIFY(!nearColor(img, QPointF(v.xOf(700), v.rowCenter(0)), arrowColor()));
    }

    void rankLabelsAndRulerArePainted()
    {
        const QImage img = renderImage(*m_model, 0, 1000, m_size);
        // Some dark text pixels in the label column next to each row and in the ruler.
        auto darkIn = [&](QRect r) {
            for (int y = r.top(); y <= r.bottom(); ++y)
                for (int x = r.left(); x <= r.right(); ++x)
                    if (img.pixelColor(x, y).lightness() < 100) return true;
            return false;
        };
        QVERIFY(darkIn(QRect(2, 28 + 5, 80, 30)));
        QVERIFY(darkIn(QRect(2, 68 + 5, 80, 30)));
        QVERIFY(darkIn(QRect(100, 2, 300, 20)));
    }

    void denseRunsFoldAndStayFast()
    {
        const QString path = m_dir.filePath("dense.mpelog");
        QVERIFY(testlog::writeLog(path.toStdString(), testlog::denseRecords(200000)));
        QString error;
        auto dense = loadModel(path, &error);
        QVERIFY(dense);
        RenderStats st;
        QElapsedTimer t;
        t.start();
        renderImage(*dense, 0, 0, QSize(1096, 200), &st);
        const qint64 ms = t.elapsed();
        QVERIFY2(st.folds > 100 && st.folds <= 1000 / 3 + 2, qPrintable(QString::number(st.folds)));
        QCOMPARE(st.boxes, size_t(1)); // the wide barrier
        QVERIFY2(ms < 2000, qPrintable(QString::number(ms)));
    }

    void svgExportHasTheBoxesAndTheArrow()
    {
        const QString out = m_dir.filePath("out.svg");
        QVERIFY(exportSvg(*m_model, fittedView(*m_model, 0, 1000, m_size), out));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&f);
        int red = 0, arrows = 0;
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement) continue;
            const auto a = xml.attributes();
            if (xml.name() == QLatin1String("rect") && a.value("fill") == QLatin1String("#ff0000")) ++red;
            if (xml.name() == QLatin1String("line") && a.value("stroke") == arrowColor().name()) ++arrows;
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QCOMPARE(red, 2); // the two compute states
        QCOMPARE(arrows, 1); // the one message
    }

    void exportRunsHeadless()
    {
        const QString out = m_dir.filePath("out.png");
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("QT_QPA_PLATFORM");
        env.remove("DISPLAY");
        p.setProcessEnvironment(env);
        p.start(UPSHOT_EXE, { "--export", out, "--range", "0:600ns", "--size", "640x200", m_path });
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        QImage img(out);
        QCOMPARE(img.size(), QSize(640, 200));
        // The range 0..600 ns puts the send's end (600 ns) at the right edge.
        const ViewState v = fittedView(*m_model, 0, 600, QSize(640, 200));
        auto [y0, y1] = v.boxY(0, 0);
        QCOMPARE(img.pixelColor(QPoint(static_cast<int>(v.xOf(590)), static_cast<int>(y0 + 2.5))), QColor(0x1E90FF));
        // A corrupt file is an error message and a non-zero exit, not a crash.
        QFile bad(m_dir.filePath("bad.mpelog"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("MPELOG\r\nnot really");
        bad.close();
        p.start(UPSHOT_EXE, { "--export", out, bad.fileName() });
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(p.readAllStandardError().contains("cannot open"));
    }
};

QTEST_MAIN(TestRender)
#include "tst_render.moc"
