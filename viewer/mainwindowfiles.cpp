// The main window's files and pages: opening a log (its preview first) or attaching to a live
// job, switching between the timeline and the live page, recent files, image export, drag and drop.
#include "mainwindow.h"

#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QProgressBar>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>

#include "livesession.h"
#include "liveview.h"
#include "loader.h"
#include "panels.h"
#include "svgexport.h"
#include "timelinewidget.h"

namespace upshot {

void MainWindow::openFile(const QString &path)
{
    m_progress->setRange(0, 100);
    m_progress->setValue(0);
    m_progress->show();
    m_hover->setText(tr("Loading %1…").arg(path));
    m_loader->load(path);
}

void MainWindow::connectToServer(const QString &listenFile)
{
    m_progress->setRange(0, 0);
    m_progress->show();
    m_hover->setText(tr("Connecting through %1…").arg(listenFile));
    m_loader->connectTo(listenFile);
}

bool MainWindow::attachLive(const QString &path)
{
    auto *session = new LiveSession(this);
    QString error;
    if (!session->attach(path, &error)) {
        delete session;
        m_hover->setText(tr("Could not attach to %1").arg(path));
        showError("liveError", tr("Could not attach to the job of %1:\n%2").arg(QFileInfo(path).fileName(), error));
        emit liveFailed(path, error);
        return false;
    }
    if (m_session) m_session->deleteLater();
    m_session = session;
    m_live->setJob(session->job());
    m_live->setSource(tr("%1 via %2").arg(QFileInfo(path).fileName(), session->endpoint()));
    connect(session, &LiveSession::updated, m_live, &LiveView::scheduleRefresh);
    connect(session, &LiveSession::jobEnded, this, [this] {
        m_live->refresh();
        statusBar()->showMessage(tr("The job ended"), 10000);
    });
    if (!inLiveMode()) {
        // The log's docks say nothing about the live job: out of the way until a log shows again.
        m_liveHiddenDocks.clear();
        for (QDockWidget *d : findChildren<QDockWidget *>())
            if (d->isVisible()) m_liveHiddenDocks.push_back(d);
        for (QDockWidget *d : m_liveHiddenDocks)
            d->hide();
        m_pages->setCurrentWidget(m_live);
    }
    setWindowTitle(QStringLiteral("%1 — upshot (live)").arg(QFileInfo(path).fileName()));
    m_hover->setText(tr("Attached to %1").arg(session->endpoint()));
    emit liveAttached(path);
    return true;
}

void MainWindow::showError(const char *objectName, const QString &text)
{
    // Window-modal and not waited for: loading and live updates go on behind it.
    auto *box = new QMessageBox(QMessageBox::Critical, tr("upshot"), text, QMessageBox::Ok, this);
    box->setObjectName(objectName);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

bool MainWindow::inLiveMode() const
{
    return m_pages->currentWidget() == m_live;
}

void MainWindow::leaveLiveMode()
{
    if (m_session) m_session->detach();
    if (!inLiveMode()) return;
    m_pages->setCurrentWidget(m_timeline);
    for (QDockWidget *d : m_liveHiddenDocks)
        d->show();
    m_liveHiddenDocks.clear();
}

void MainWindow::showPreview(std::shared_ptr<TraceModel> preview, const QString &path)
{
    leaveLiveMode();
    m_model = std::move(preview);
    m_previewPath = path;
    m_timeline->setModel(m_model);
    m_waits->setModel(nullptr);
    m_waits->setStatus(tr("Loading…"));
    setWindowTitle(QStringLiteral("%1 — upshot (preview)").arg(QFileInfo(path).fileName()));
    emit previewShown(path);
}

QStringList MainWindow::recentFiles()
{
    return QSettings().value("recentFiles").toStringList();
}

void MainWindow::addRecent(const QString &path)
{
    QStringList l = recentFiles();
    l.removeAll(path);
    l.prepend(path);
    while (l.size() > 8)
        l.removeLast();
    QSettings().setValue("recentFiles", l);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    for (const QString &p : recentFiles())
        m_recentMenu->addAction(p, this, [this, p] { openFile(p); });
    m_recentMenu->setEnabled(!m_recentMenu->isEmpty());
}

void MainWindow::exportImage()
{
    if (inLiveMode()) {
        const QString p = QFileDialog::getSaveFileName(
            this, tr("Export image"), QStringLiteral("live.png"), tr("PNG images (*.png)"));
        if (!p.isEmpty() && !m_live->grab().save(p))
            QMessageBox::warning(this, tr("upshot"), tr("Could not write %1").arg(p));
        return;
    }
    if (!m_model) return;
    const QString p = QFileDialog::getSaveFileName(
        this, tr("Export image"), QStringLiteral("timeline.png"), tr("PNG images (*.png);;SVG drawings (*.svg)"));
    if (p.isEmpty()) return;
    if (p.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive)) {
        if (!exportSvg(*m_model, m_timeline->view(), p))
            QMessageBox::warning(this, tr("upshot"), tr("Could not write %1").arg(p));
        return;
    }
    QImage img(m_timeline->viewport()->size(), QImage::Format_RGB32);
    QPainter painter(&img);
    paintTimeline(painter, *m_model, m_timeline->view());
    painter.end();
    if (!img.save(p)) QMessageBox::warning(this, tr("upshot"), tr("Could not write %1").arg(p));
}

void MainWindow::dragEnterEvent(QDragEnterEvent *e)
{
    if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent *e)
{
    const auto urls = e->mimeData()->urls();
    if (urls.isEmpty() || !urls.first().isLocalFile()) return;
    const QString path = urls.first().toLocalFile();
    if (path.endsWith(QLatin1String(".live")))
        attachLive(path);
    else
        openFile(path);
}

} // namespace upshot
