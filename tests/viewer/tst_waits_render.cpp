// Wait states in upshot, in pictures: the overlay's colour fills the waiting part of the waiting
// state's box and nothing else, toggles off, highlights a Late Sender's message and the sender's
// state, and `upshot --export --waits` draws it headless (PNG and SVG).
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include "mpe/interop.h"
#include "renderer.h"
#include "svgexport.h"
#include "testlog.h"
#include "tracebuilder.h"
#include "waitstates.h"

using namespace upshot;
using mpe::analysis::waits::Pattern;

namespace {

constexpr int kLS = static_cast<int>(Pattern::kLateSender);
constexpr int kBarrier = static_cast<int>(Pattern::kWaitBarrier);

// Pixels of colour c in the box of (row, depth 0) between x columns [xa, xb].
int countIn(const QImage &img, const ViewState &v, int row, int xa, int xb, QColor c)
{
    auto [y0, y1] = v.boxY(row, 0);
    int n = 0;
    for (int y = static_cast<int>(y0); y < static_cast<int>(y1); ++y)
        for (int x = std::max(xa, 0); x <= std::min(xb, img.width() - 1); ++x)
            n += img.pixelColor(x, y) == c;
    return n;
}

// Pixels of colour c anywhere in the plot rows.
int countAll(const QImage &img, const ViewState &v, QColor c)
{
    int n = 0;
    for (int y = v.rulerHeight; y < img.height(); ++y)
        for (int x = v.labelWidth; x < img.width(); ++x)
            n += img.pixelColor(x, y) == c;
    return n;
}

} // namespace

class TestWaitsRender : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_path;
    std::shared_ptr<TraceModel> m_model;
    // 700 px for [100, 450] ns: 0.5 ns per pixel; rows 40 px.
    const QSize m_size { 96 + 700, 28 + 2 * 40 };

    QImage paint(const ViewState &v) const
    {
        QImage img(v.size, QImage::Format_RGB32);
        img.fill(Qt::white);
        QPainter p(&img);
        paintTimeline(p, *m_model, v);
        p.end();
        return img;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_path = m_dir.filePath("waits.mpelog");
        QVERIFY(testlog::writeLog(m_path.toStdString(), testlog::waitRecords()));
        auto opened = mpe::interop::OpenedLog::open(m_path.toStdString());
        QVERIFY(opened.ok());
        auto model = buildModel((*opened)->file());
        QVERIFY(model.ok());
        m_model = *model;
        auto waits = analyzeWaits((*opened)->file(), *m_model);
        QVERIFY2(waits.ok(), waits.status().to_string().c_str());
        m_model->setWaits(*waits);
    }

    // Rank 1 waits in MPI_Recv over [100, 150] (pixels 96..196), rank 0 in MPI_Barrier over
    // [300, 400] (pixels 496..696): a third of those boxes or more is the pattern's colour (the
    // stripes and the bottom bar), and the colour is nowhere else.
    void overlayColoursTheWaitingPartOfTheState()
    {
        const ViewState v = fittedView(*m_model, 100, 450, m_size);
        QCOMPARE(v.rowHeight, 40.0);
        QCOMPARE(v.scale.nsPerPixel(), 0.5);
        const QImage img = paint(v);
        const QColor ls = waitColor(kLS), barrier = waitColor(kBarrier);
        auto [y0, y1] = v.boxY(1, 0);
        const int boxHeight = static_cast<int>(y1) - static_cast<int>(y0);
        const int x100 = static_cast<int>(v.xOf(100)), x150 = static_cast<int>(v.xOf(150));
        const int inLs = countIn(img, v, 1, x100, x150 - 1, ls);
        QVERIFY2(inLs >= (x150 - x100) * boxHeight / 3, qPrintable(QString::number(inLs)));
        QCOMPARE(countAll(img, v, ls), inLs); // nowhere else
        // The state's own colour shows between the stripes, and after the waiting part.
        QVERIFY(countIn(img, v, 1, x100, x150 - 1, QColor(0x32CD32)) > 0);
        QCOMPARE(img.pixelColor(static_cast<int>(v.xOf(250)), static_cast<int>(y0) + 3), QColor(0x32CD32));
        const int x300 = static_cast<int>(v.xOf(300)), x400 = static_cast<int>(v.xOf(400));
        const int inBarrier = countIn(img, v, 0, x300, x400 - 1, barrier);
        QVERIFY2(inBarrier >= (x400 - x300) * boxHeight / 3, qPrintable(QString::number(inBarrier)));
        QCOMPARE(countAll(img, v, barrier), inBarrier);
        // The hatch: along a pixel row inside the box, stripes 2 px wide every 6 px.
        const int y = static_cast<int>(y0) + 5;
        int stripes = 0;
        for (int x = x100; x < x150; ++x)
            stripes += img.pixelColor(x, y) == ls && img.pixelColor(x - 1, y) != ls;
        QVERIFY2(stripes >= 15 && stripes <= 18, qPrintable(QString::number(stripes)));
    }

    void overlayTurnsOff()
    {
        ViewState v = fittedView(*m_model, 100, 450, m_size);
        v.showWaits = false;
        const QImage img = paint(v);
        QCOMPARE(countAll(img, v, waitColor(kLS)), 0);
        QCOMPARE(countAll(img, v, waitColor(kBarrier)), 0);
    }

    // The selected Late Sender: its message's arrow (150 on rank 0 -> 300 on rank 1) is drawn
    // 3 px wide in the pattern's colour, and the sender's MPI_Send [150, 200] is framed in it.
    void selectedLateSenderShowsTheMessageAndTheSend()
    {
        ViewState v = fittedView(*m_model, 100, 450, m_size);
        v.selectedWait = { 1, 0 };
        const QImage img = paint(v);
        const QColor ls = waitColor(kLS);
        const QPointF a(v.xOf(150), v.rowCenter(0)), b(v.xOf(300), v.rowCenter(1));
        for (double f : { 0.25, 0.5, 0.75 }) {
            const QPointF q = a + (b - a) * f;
            QCOMPARE(img.pixelColor(q.toPoint()), ls);
        }
        auto [y0, y1] = v.boxY(0, 0);
        const int top = static_cast<int>(y0) - 1;
        int framed = 0;
        for (int x = static_cast<int>(v.xOf(155)); x <= static_cast<int>(v.xOf(195)); ++x)
            framed += img.pixelColor(x, top) == ls;
        QVERIFY2(framed >= 75, qPrintable(QString::number(framed)));
        // Unselected, the arrow keeps the arrows' colour.
        const QImage plain = paint(fittedView(*m_model, 100, 450, m_size));
        const QPoint mid = (a + (b - a) * 0.5).toPoint();
        bool dark = false;
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
                dark |= plain.pixelColor(mid + QPoint(dx, dy)) == arrowColor();
        QVERIFY(dark);
        QVERIFY(plain.pixelColor(static_cast<int>(v.xOf(175)), top) != ls);
    }

    void exportDrawsTheOverlayWithWaits()
    {
        const QString with = m_dir.filePath("with.png"), without = m_dir.filePath("without.png");
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("QT_QPA_PLATFORM");
        env.remove("DISPLAY");
        p.setProcessEnvironment(env);
        const QStringList common = { "--range", "100ns:450ns", "--size", "796x108", m_path };
        p.start(UPSHOT_EXE, QStringList { "--export", with, "--waits" } + common);
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(p.readAllStandardOutput().contains("2 wait states"));
        p.start(UPSHOT_EXE, QStringList { "--export", without } + common);
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        const ViewState v = fittedView(*m_model, 100, 450, m_size);
        const int x100 = static_cast<int>(v.xOf(100)), x150 = static_cast<int>(v.xOf(150));
        QVERIFY(countIn(QImage(with), v, 1, x100, x150 - 1, waitColor(kLS)) > 1000);
        QCOMPARE(countAll(QImage(without), v, waitColor(kLS)), 0);
        // --waits needs the decoded log.
        p.start(UPSHOT_EXE, QStringList { "--export", with, "--waits", "--preview", m_path });
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 2);
    }

    // Through the painter (SVG), the overlay is a translucent tint of the pattern's colour.
    void svgHasTheTint()
    {
        const QString out = m_dir.filePath("waits.svg");
        QVERIFY(exportSvg(*m_model, fittedView(*m_model, 100, 450, m_size), out));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QXmlStreamReader xml(&f);
        int tints = 0;
        while (!xml.atEnd()) {
            if (xml.readNext() != QXmlStreamReader::StartElement || xml.name() != QLatin1String("rect")) continue;
            const auto a = xml.attributes();
            if (a.value("fill") == waitColor(kLS).name() && a.hasAttribute("fill-opacity")) ++tints;
        }
        QVERIFY(!xml.hasError());
        QCOMPARE(tints, 1);
    }
};

QTEST_MAIN(TestWaitsRender)
#include "tst_waits_render.moc"
