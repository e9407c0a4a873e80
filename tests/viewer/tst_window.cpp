// Interaction tests of upshot: zoom about the mouse, zoom history, rubber-band zoom, click and
// key zoom, double-click to a state, panning, background loading, call sites in the details
// pane and the search box, and the corrupt-file dialog.
#include <QComboBox>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "loader.h"
#include "mainwindow.h"
#include "testlog.h"
#include "timelinewidget.h"

using namespace upshot;

class TestWindow : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_path;
    std::shared_ptr<TraceModel> m_model;

    static void wheel(QWidget *w, QPointF pos, int delta, Qt::KeyboardModifiers mods = Qt::NoModifier)
    {
        QWheelEvent e(
            pos, w->mapToGlobal(pos), QPoint(), QPoint(0, delta), Qt::NoButton, mods, Qt::NoScrollPhase, false);
        QApplication::sendEvent(w, &e);
    }
    static void mouse(QWidget *w, QEvent::Type type, QPointF pos, Qt::MouseButton button, Qt::MouseButtons buttons,
        Qt::KeyboardModifiers mods = Qt::NoModifier)
    {
        QMouseEvent e(type, pos, w->mapToGlobal(pos), button, buttons, mods);
        QApplication::sendEvent(w, &e);
    }
    static void drag(QWidget *w, QPointF a, QPointF b, Qt::KeyboardModifiers mods = Qt::NoModifier)
    {
        mouse(w, QEvent::MouseButtonPress, a, Qt::LeftButton, Qt::LeftButton, mods);
        mouse(w, QEvent::MouseMove, (a + b) / 2, Qt::NoButton, Qt::LeftButton, mods);
        mouse(w, QEvent::MouseMove, b, Qt::NoButton, Qt::LeftButton, mods);
        mouse(w, QEvent::MouseButtonRelease, b, Qt::LeftButton, Qt::NoButton, mods);
    }

    // Opens path in win and waits (up to 10 s) until it is loaded or has failed.
    struct Opened
    {
        int previews = 0; // previewShown signals before the end
        bool loaded = false;
        QString error;
    };
    static Opened openAndWait(MainWindow &win, const QString &path)
    {
        QSignalSpy preview(&win, &MainWindow::previewShown);
        QSignalSpy loaded(&win, &MainWindow::fileLoaded);
        QSignalSpy failed(&win, &MainWindow::loadFailed);
        win.openFile(path);
        QElapsedTimer t;
        t.start();
        while (loaded.isEmpty() && failed.isEmpty() && t.elapsed() < 10000)
            QTest::qWait(5);
        return { static_cast<int>(preview.count()), !loaded.isEmpty(),
            failed.isEmpty() ? QString() : failed.first().at(1).toString() };
    }

    std::unique_ptr<TimelineWidget> makeWidget()
    {
        auto w = std::make_unique<TimelineWidget>();
        w->resize(900, 400);
        w->show();
        w->setModel(m_model);
        return w;
    }

private slots:
    void initTestCase()
    {
        m_path = m_dir.filePath("known.mpelog");
        QVERIFY(testlog::writeKnownLog(m_path.toStdString()));
        QString error;
        m_model = loadModel(m_path, &error);
        QVERIFY(m_model);
    }

    void startsFittedToTheRun()
    {
        auto w = makeWidget();
        QCOMPARE(w->view().scale.t0(), 0.0);
        QVERIFY(qAbs(w->view().scale.t1() - 1000) < 1e-6);
        QVERIFY(!w->canGoBack());
    }

    void wheelZoomKeepsTheTimeUnderTheMouse_data()
    {
        QTest::addColumn<double>("x");
        QTest::addColumn<int>("delta");
        QTest::newRow("in near the left") << 150.0 << 120;
        QTest::newRow("in at the middle") << 500.0 << 240;
        QTest::newRow("out near the right") << 850.0 << -120;
    }
    void wheelZoomKeepsTheTimeUnderTheMouse()
    {
        QFETCH(double, x);
        QFETCH(int, delta);
        auto w = makeWidget();
        const QPointF pos(x, 150);
        const double before = w->view().timeAt(x);
        const double spanBefore = w->view().scale.visibleSpan();
        wheel(w->viewport(), pos, delta);
        QVERIFY(qAbs(w->view().timeAt(x) - before) < 1e-6 * spanBefore);
        if (delta > 0)
            QVERIFY(w->view().scale.visibleSpan() < spanBefore);
        else
            QVERIFY(w->view().scale.visibleSpan() > spanBefore);
    }

    void ctrlWheelZoomsRowsAboutTheMouse()
    {
        auto w = makeWidget();
        w->resize(900, 240); // a low plot, so that the rows outgrow it well below the row-height cap
        // Precondition: rows at least twice as tall as the plot, so that the zoom below scrolls
        // freely, clamped neither at the top nor at the bottom. Zooming about the ruler's edge
        // (row position 0) grows the rows without scrolling.
        const int rows = m_model->rowCount();
        for (int i = 0; i < 50 && rows * w->view().rowHeight < 2 * w->view().plotRect().height(); ++i)
            wheel(w->viewport(), QPointF(400, w->view().rulerHeight), 120, Qt::ControlModifier);
        QVERIFY(rows * w->view().rowHeight >= 2 * w->view().plotRect().height());
        QCOMPARE(w->view().yOffset, 0.0);

        const double h = w->view().rowHeight;
        const double y = 100;
        const double rowPos = (y - w->view().rulerHeight + w->view().yOffset) / h;
        wheel(w->viewport(), QPointF(400, y), 120, Qt::ControlModifier);
        QVERIFY(w->view().rowHeight > h);
        QVERIFY(w->view().yOffset > 0); // it scrolled to keep the row under the mouse
        const double after = (y - w->view().rulerHeight + w->view().yOffset) / w->view().rowHeight;
        QVERIFY(qAbs(after - rowPos) < 1e-6);
    }

    void zoomHistoryGoesBackAndForward()
    {
        auto w = makeWidget();
        const TimeScale s0 = w->view().scale;
        w->zoomToRange(100, 300);
        const TimeScale s1 = w->view().scale;
        w->zoomToRange(150, 200);
        const TimeScale s2 = w->view().scale;
        QVERIFY(w->canGoBack() && !w->canGoForward());
        w->back();
        QCOMPARE(w->view().scale, s1);
        w->back();
        QCOMPARE(w->view().scale, s0);
        QVERIFY(!w->canGoBack());
        w->forward();
        QCOMPARE(w->view().scale, s1);
        w->forward();
        QCOMPARE(w->view().scale, s2);
        // A new zoom after going back drops the forward list.
        w->back();
        w->zoomToRange(0, 10);
        QVERIFY(!w->canGoForward());
        // Keys: Backspace goes back.
        QTest::keyClick(w.get(), Qt::Key_Backspace);
        QCOMPARE(w->view().scale, s1);
    }

    void rubberBandZoomsToTheBand()
    {
        auto w = makeWidget();
        const double a = 200, b = 500;
        const double ta = w->view().timeAt(a), tb = w->view().timeAt(b);
        drag(w->viewport(), QPointF(a, 100), QPointF(b, 120), Qt::ControlModifier);
        QVERIFY(qAbs(w->view().scale.t0() - ta) < 1e-6);
        QVERIFY(qAbs(w->view().scale.t1() - tb) < 1e-6);
        QVERIFY(w->view().rubberBand.isEmpty());
        QVERIFY(w->canGoBack());
    }

    void dragPansAndShiftDragMeasures()
    {
        auto w = makeWidget();
        w->zoomToRange(200, 400);
        const double t0 = w->view().scale.t0();
        const double px = w->view().scale.nsPerPixel();
        drag(w->viewport(), QPointF(500, 100), QPointF(400, 100));
        QVERIFY(qAbs(w->view().scale.t0() - (t0 + 100 * px)) < 1e-6);
        QSignalSpy details(w.get(), &TimelineWidget::detailsChanged);
        drag(w->viewport(), QPointF(300, 100), QPointF(500, 100), Qt::ShiftModifier);
        QVERIFY(w->view().measure.has_value());
        QVERIFY(qAbs(w->view().measure->second - w->view().measure->first - 200 * px) < 1e-6);
        QCOMPARE(details.count(), 1);
        QVERIFY(details.first().first().toString().contains("duration ruler"));
    }

    void clickZoomsInAndShiftClickOut()
    {
        auto w = makeWidget();
        const QPointF pos(300, 60);
        const double t = w->view().timeAt(pos.x());
        const double span = w->view().scale.visibleSpan();
        QSignalSpy details(w.get(), &TimelineWidget::detailsChanged);
        mouse(w->viewport(), QEvent::MouseButtonPress, pos, Qt::LeftButton, Qt::LeftButton);
        mouse(w->viewport(), QEvent::MouseButtonRelease, pos, Qt::LeftButton, Qt::NoButton);
        QVERIFY(qAbs(w->view().scale.visibleSpan() - span / 2) < 1e-6);
        QVERIFY(qAbs(w->view().timeAt(pos.x()) - t) < 1e-6);
        QCOMPARE(details.count(), 1); // the clicked state is described
        mouse(w->viewport(), QEvent::MouseButtonPress, pos, Qt::LeftButton, Qt::LeftButton, Qt::ShiftModifier);
        mouse(w->viewport(), QEvent::MouseButtonRelease, pos, Qt::LeftButton, Qt::NoButton, Qt::ShiftModifier);
        QVERIFY(qAbs(w->view().scale.visibleSpan() - span) < 1e-6);
    }

    void keysZoomAndPan()
    {
        auto w = makeWidget();
        const double span = w->view().scale.visibleSpan();
        QTest::keyClick(w.get(), Qt::Key_Plus);
        QVERIFY(qAbs(w->view().scale.visibleSpan() - span / 2) < 1e-6);
        const double t0 = w->view().scale.t0();
        QTest::keyClick(w.get(), Qt::Key_Right);
        QVERIFY(w->view().scale.t0() > t0);
        QTest::keyClick(w.get(), Qt::Key_Minus);
        QVERIFY(qAbs(w->view().scale.visibleSpan() - span) < 1e-6);
        QTest::keyClick(w.get(), Qt::Key_Home);
        QCOMPARE(w->view().scale.t0(), 0.0);
    }

    void doubleClickZoomsToTheState()
    {
        auto w = makeWidget();
        w->setClickZooms(false);
        // The receive on rank 1, [300, 800].
        const double x = w->view().xOf(600), y = w->view().rowCenter(1);
        mouse(w->viewport(), QEvent::MouseButtonDblClick, QPointF(x, y), Qt::LeftButton, Qt::LeftButton);
        QVERIFY(w->view().scale.t0() < 300 && w->view().scale.t0() > 250);
        QVERIFY(w->view().scale.t1() > 800 && w->view().scale.t1() < 850);
        QVERIFY(w->view().selected.valid());
    }

    void hoverDescribesStatesAndArrows()
    {
        auto w = makeWidget();
        const ViewState &v = w->view();
        QVERIFY(w->describeAt(QPointF(v.xOf(600), v.rowCenter(1) + 8)).contains("MPI_Recv"));
        const QPointF a(v.xOf(500), v.rowCenter(0)), b(v.xOf(800), v.rowCenter(1));
        QVERIFY(w->describeAt(a + (b - a) * 0.5).contains("message 0 -> 1"));
        QVERIFY(w->describeAt(QPointF(v.xOf(450), v.rowCenter(0))).isEmpty());
    }

    void scrollBarPans()
    {
        auto w = makeWidget();
        w->zoomToRange(0, 100);
        QScrollBar *h = w->horizontalScrollBar();
        QVERIFY(h->maximum() > 0);
        h->setValue(h->maximum());
        QVERIFY(qAbs(w->view().scale.t1() - 1000) < 5);
    }

    void mainWindowLoadsInTheBackground()
    {
        MainWindow win;
        win.show();
        const Opened opened = openAndWait(win, m_path);
        QVERIFY(opened.loaded);
        QCOMPARE(opened.previews, 1); // the index preview came first
        QVERIFY(win.timeline()->model());
        QVERIFY(!win.timeline()->model()->isPreview());
        QCOMPARE(win.timeline()->model()->rowCount(), 2);
        QVERIFY(MainWindow::recentFiles().contains(QFileInfo(m_path).absoluteFilePath()));
        // Search from the cursor goes forward in time.
        win.timeline()->setCursorTime(50);
        win.search(true);
        QCOMPARE(win.timeline()->view().selected.row, 0);
        QCOMPARE(win.timeline()->model()->start(0, win.timeline()->view().selected.index), 100.0);
        win.search(true);
        QCOMPARE(win.timeline()->view().selected.row, 1);
        win.search(false);
        QCOMPARE(win.timeline()->model()->start(0, win.timeline()->view().selected.index), 100.0);
        // Clicking rank 1's label limits the search to rank 1.
        TimelineWidget *t = win.timeline();
        const QPointF label(10, t->view().rowCenter(1));
        mouse(t->viewport(), QEvent::MouseButtonPress, label, Qt::LeftButton, Qt::LeftButton);
        mouse(t->viewport(), QEvent::MouseButtonRelease, label, Qt::LeftButton, Qt::NoButton);
        QCOMPARE(t->selectedRows(), std::vector<int> { 1 });
        t->setCursorTime(0);
        win.search(true);
        QCOMPARE(t->view().selected.row, 1);
        QCOMPARE(t->model()->start(1, t->view().selected.index), 300.0);
    }

    // A clicked state's call site shows in the details pane; Find steps through a call site's
    // states, typed as file:line or picked from the list.
    void detailsAndSearchShowCallSites()
    {
        const QString path = m_dir.filePath("callsites.mpelog");
        QVERIFY(testlog::writeCallsiteLog(path.toStdString()));
        MainWindow win;
        win.show();
        QVERIFY(openAndWait(win, path).loaded);
        auto *details = win.findChild<QPlainTextEdit *>("details");
        QVERIFY(details);
        TimelineWidget *t = win.timeline();
        t->setClickZooms(false);
        // Rank 1's receive [300, 800], from callsites.c:70 in worker().
        const QPointF pos(t->view().xOf(600), t->view().rowCenter(1));
        mouse(t->viewport(), QEvent::MouseButtonPress, pos, Qt::LeftButton, Qt::LeftButton);
        mouse(t->viewport(), QEvent::MouseButtonRelease, pos, Qt::LeftButton, Qt::NoButton);
        QVERIFY(t->describeAt(pos).endsWith("\ncall site callsites.c:70 (worker)")); // the tooltip
        const StateRef clicked = t->view().selected;
        QCOMPARE(clicked.row, 1);
        QCOMPARE(t->model()->start(1, clicked.index), 300.0);
        QVERIFY2(details->toPlainText().endsWith("MPI_Recv on rank 1\nstart 300 ns\nduration 500 ns\ndepth 0\n"
                                                 "call site callsites.c:70 (worker)"),
            qPrintable(details->toPlainText()));
        // Typed: the library frame's file:line finds rank 0's two sends, then rank 1's.
        win.setSearchText("csite.c:12");
        t->setCursorTime(0);
        QVERIFY(win.search(true));
        QCOMPARE(t->view().selected.row, 0);
        QCOMPARE(t->model()->start(0, t->view().selected.index), 500.0);
        QVERIFY(details->toPlainText().endsWith(
            "call site csite.c:12 (csite_send) in libcsite.so\n  <- callsites.c:50 (main)"));
        QVERIFY(win.search(true));
        QCOMPARE(t->model()->start(0, t->view().selected.index), 700.0);
        QVERIFY(win.search(true));
        QCOMPARE(t->view().selected.row, 1);
        QCOMPARE(t->model()->start(1, t->view().selected.index), 1100.0);
        QVERIFY(!win.search(true));
        QVERIFY(win.search(false));
        QCOMPARE(t->model()->start(0, t->view().selected.index), 700.0);
        // Picked from the list: exactly that site.
        auto *box = win.findChild<QComboBox *>("searchCategory");
        const int entry = box->findText("callsites.c:42 (main)");
        QVERIFY(entry > 0);
        box->setCurrentIndex(entry);
        t->setCursorTime(0);
        QVERIFY(win.search(true));
        QCOMPARE(t->model()->start(0, t->view().selected.index), 100.0); // the nested barrier
        QVERIFY(details->toPlainText().endsWith("depth 1\ncall site callsites.c:42 (main)"));
        // Nothing matches: the search says so and keeps the selection.
        win.setSearchText("halo.c:1");
        QVERIFY(!win.search(true));
        QCOMPARE(t->model()->start(0, t->view().selected.index), 100.0);
        // A category typed by name still works.
        win.setSearchText("mpi_recv");
        t->setCursorTime(0);
        QVERIFY(win.search(true));
        QCOMPARE(t->model()->start(1, t->view().selected.index), 300.0);
    }

    // The full model replaces its preview in the view the user zoomed to; a new file fits.
    void replacingThePreviewKeepsTheView()
    {
        auto w = makeWidget();
        w->zoomToRange(100, 300);
        const ViewState zoomed = w->view();
        QString error;
        auto other = loadModel(m_path, &error);
        QVERIFY(other);
        w->setModel(other, true);
        QCOMPARE(w->model(), other.get());
        QCOMPARE(w->view().scale, zoomed.scale);
        QCOMPARE(w->view().rowHeight, zoomed.rowHeight);
        w->setModel(other);
        QVERIFY(!(w->view().scale == zoomed.scale));
    }

    // A chunk that fails its checksum shows up only when decoded, after the preview from the
    // (intact) index: the preview goes and the error dialog names the file.
    void damagedChunkAfterThePreviewShowsAnErrorDialog()
    {
        QFile good(m_path);
        QVERIFY(good.open(QIODevice::ReadOnly));
        QByteArray bytes = good.readAll();
        const int payload = 64 + 128; // file header, then the first chunk's header
        for (int i = payload; i < payload + 16; ++i)
            bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
        const QString bad = m_dir.filePath("badchunk.mpelog");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(bytes);
        f.close();
        MainWindow win;
        win.show();
        const Opened opened = openAndWait(win, bad);
        QCOMPARE(opened.previews, 1);
        QVERIFY(opened.error.contains("corrupt"));
        auto *box = win.findChild<QMessageBox *>("loadError");
        QVERIFY(box && box->isVisible());
        QVERIFY(box->text().contains("badchunk.mpelog"));
        QVERIFY(!win.timeline()->model());
        box->accept();
    }

    void corruptFileShowsAnErrorDialog()
    {
        const QString bad = m_dir.filePath("corrupt.mpelog");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        QFile good(m_path);
        QVERIFY(good.open(QIODevice::ReadOnly));
        QByteArray bytes = good.readAll();
        bytes.truncate(bytes.size() - 10); // footer gone
        f.write(bytes);
        f.close();
        MainWindow win;
        win.show();
        const Opened opened = openAndWait(win, bad);
        QVERIFY(!opened.error.isEmpty());
        QCOMPARE(opened.previews, 0); // the footer is gone: nothing to preview
        auto *box = win.findChild<QMessageBox *>("loadError");
        QVERIFY(box);
        QVERIFY(box->isVisible());
        QVERIFY(box->text().contains("corrupt.mpelog"));
        QVERIFY(!win.timeline()->model());
        box->accept();
    }
};

QTEST_MAIN(TestWindow)
#include "tst_window.moc"
