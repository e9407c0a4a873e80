// Counter tracks in pictures: the step plot sits in the band under its rank's row, at the height
// its level gives (scaled to the track's largest level), nowhere else; hiding the counter removes
// it; `upshot --export --umq` draws the rebuilt unexpected queue under the receiving rank.
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "counterlog.h"
#include "countertracks.h"
#include "renderer.h"
#include "tracebuilder.h"

using namespace upshot;

namespace {

// The rows of column x between y [ya, yb] painted in colour c.
std::vector<int> rowsOf(const QImage &img, int x, int ya, int yb, QColor c)
{
    std::vector<int> ys;
    for (int y = std::max(ya, 0); y <= std::min(yb, img.height() - 1); ++y)
        if (img.pixelColor(x, y) == c) ys.push_back(y);
    return ys;
}

int countAll(const QImage &img, QColor c)
{
    int n = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x)
            n += img.pixelColor(x, y) == c;
    return n;
}

} // namespace

class TestCountersRender : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_path;
    std::shared_ptr<TraceModel> m_model;
    // 900 px for [0, 1000] ns; rows 60 px, so the band is the full kCounterBand.
    const QSize m_size { 96 + 900, 28 + 2 * 60 };

    QImage paint(const ViewState &v, RenderStats *st = nullptr) const
    {
        QImage img(v.size, QImage::Format_RGB32);
        img.fill(Qt::white);
        QPainter p(&img);
        paintTimeline(p, *m_model, v, st);
        p.end();
        return img;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QString error;
        m_model = counterlog::writeAndLoad(m_dir.path(), &m_path, &error);
        QVERIFY2(m_model, qPrintable(error));
        QVERIFY(m_model->counters());
    }

    void stepPlotSitsInTheBandAtItsLevel()
    {
        const ViewState v = fittedView(*m_model, 0, 1000, m_size);
        QCOMPARE(v.rowHeight, 60.0);
        RenderStats st;
        const QImage img = paint(v, &st);
        QCOMPARE(st.counterTracks, size_t(2));
        const QColor c = m_model->counters()->counters()[0].color;
        const double bottom = v.rowTop(0) + v.rowHeight, top = bottom - v.counterBand(0);
        const double y0 = top + 1.5, y1 = bottom - 1;
        auto yOf = [&](double level) { return y1 - level / 5 * (y1 - y0); };
        // Levels 0 (before 150), 3, 5, 0 (from 600): one pixel of the line per column, within a
        // pixel of where the level puts it.
        for (auto [t, level] : { std::pair(100.0, 0.0), { 200.0, 3.0 }, { 400.0, 5.0 }, { 800.0, 0.0 } }) {
            const int x = static_cast<int>(v.xOf(t));
            const std::vector<int> ys = rowsOf(img, x, static_cast<int>(top), static_cast<int>(bottom), c);
            QVERIFY2(ys.size() == 1, qPrintable(QString("t=%1: %2 pixels").arg(t).arg(ys.size())));
            QVERIFY2(std::abs(ys[0] - yOf(level)) <= 1.0,
                qPrintable(QString("t=%1: y %2, want %3").arg(t).arg(ys[0]).arg(yOf(level))));
        }
        // The steps are vertical lines at the samples' times: 150 rises from 0 to 3.
        const std::vector<int> rise
            = rowsOf(img, static_cast<int>(v.xOf(150)), static_cast<int>(top), static_cast<int>(bottom), c);
        QVERIFY(rise.size() >= static_cast<size_t>(yOf(0) - yOf(3)));
        // Nothing of the counter's colour outside rank 0's band.
        const QRect bandRect(v.labelWidth, static_cast<int>(top), m_size.width(), static_cast<int>(bottom - top) + 1);
        int outside = 0;
        for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width(); ++x)
                outside += !bandRect.contains(x, y) && img.pixelColor(x, y) == c;
        QCOMPARE(outside, 0);
        // Rank 1's counter is in its own band.
        const QColor c1 = m_model->counters()->counters()[1].color;
        const int x = static_cast<int>(v.xOf(800));
        QCOMPARE(rowsOf(img, x, static_cast<int>(v.rowTop(1) + v.rowHeight - v.counterBand(1)),
                     static_cast<int>(v.rowTop(1) + v.rowHeight), c1)
                     .size(),
            size_t(1));
    }

    void hiddenCounterIsNotDrawn()
    {
        CounterInfo &info = m_model->counters()->counter(0);
        info.visible = false;
        const ViewState v = fittedView(*m_model, 0, 1000, m_size);
        QCOMPARE(v.counterBand(0), 0.0);
        RenderStats st;
        const QImage img = paint(v, &st);
        info.visible = true;
        QCOMPARE(st.counterTracks, size_t(1));
        QCOMPARE(countAll(img, info.color), 0);
    }

    void exportDrawsTheRebuiltQueueWithUmq()
    {
        const QString with = m_dir.filePath("umq.png"), without = m_dir.filePath("plain.png");
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("QT_QPA_PLATFORM");
        env.remove("DISPLAY");
        p.setProcessEnvironment(env);
        const QStringList common = { "--range", "0ns:1000ns", "--size", "996x148", m_path };
        p.start(UPSHOT_EXE, QStringList { "--export", with, "--umq" } + common);
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        p.start(UPSHOT_EXE, QStringList { "--export", without } + common);
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        const QColor red(200, 30, 30); // the rebuilt queue's colour
        ViewState v = fittedView(*m_model, 0, 1000, m_size);
        const QImage img(with);
        QCOMPARE(img.size(), m_size);
        // Rank 1's queue holds the message on [100, 300): at the band's top (level 1 = its max).
        const double bottom = v.rowTop(1) + v.rowHeight, top = bottom - v.counterBand(1);
        const std::vector<int> ys
            = rowsOf(img, static_cast<int>(v.xOf(200)), static_cast<int>(top), static_cast<int>(bottom), red);
        QCOMPARE(ys.size(), size_t(1));
        QVERIFY(std::abs(ys[0] - (top + 1.5)) <= 1.0);
        // Empty again after the post.
        const std::vector<int> after
            = rowsOf(img, static_cast<int>(v.xOf(400)), static_cast<int>(top), static_cast<int>(bottom), red);
        QCOMPARE(after.size(), size_t(1));
        QVERIFY(std::abs(after[0] - (bottom - 1)) <= 1.0);
        QCOMPARE(countAll(QImage(without), red), 0);
    }
};

QTEST_MAIN(TestCountersRender)
#include "tst_counters_render.moc"
