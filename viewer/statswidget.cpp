// The statistics of the visible window: load balance, time per call site, communication matrix.
#include "statswidget.h"

#include <QCheckBox>
#include <QHeaderView>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

namespace upshot {

StatsWidget::StatsWidget(QWidget *parent) : QWidget(parent)
{
    m_tabs = new QTabWidget(this);
    m_load = new QTableWidget(this);
    m_matrix = new QTableWidget(this);
    m_sitePage = new QWidget(this);
    m_wholeRun = new QCheckBox(tr("whole run (else the visible window)"), m_sitePage);
    m_wholeRun->setObjectName("callSitesWholeRun");
    m_sites = new QTableWidget(m_sitePage);
    m_sites->setObjectName("callSiteTable");
    m_sites->setColumnCount(SiteColumnCount);
    m_sites->setHorizontalHeaderLabels({ tr("Call site"), tr("Routine"), tr("Calls"), tr("Time") });
    m_sites->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_sites->verticalHeader()->hide();
    m_sites->setWordWrap(false);
    m_sites->setTextElideMode(Qt::ElideMiddle); // a deep site's text is long; the tooltip has it all
    m_sites->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_sites->horizontalHeader()->setSectionResizeMode(SiteTextColumn, QHeaderView::Stretch);
    auto *siteLay = new QVBoxLayout(m_sitePage);
    siteLay->setContentsMargins(2, 2, 2, 2);
    siteLay->addWidget(m_wholeRun);
    siteLay->addWidget(m_sites);
    m_tabs->addTab(m_load, tr("Time per category"));
    m_tabs->addTab(m_sitePage, tr("Time per call site"));
    m_tabs->addTab(m_matrix, tr("Bytes sent (row → column)"));
    auto *lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    lay->addWidget(m_tabs);
    for (auto *t : { m_load, m_matrix, m_sites })
        t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        if (m_sitesStale && m_tabs->currentWidget() == m_sitePage) updateCallSites();
    });
    connect(m_wholeRun, &QCheckBox::toggled, this, [this] { updateCallSites(); });
    connect(m_sites, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        const QTableWidgetItem *it = m_sites->item(row, SiteTextColumn);
        if (it && it->data(Qt::UserRole).toUInt() != 0) emit callSiteActivated(it->data(Qt::UserRole).toUInt());
    });
}

void StatsWidget::setModel(std::shared_ptr<TraceModel> model)
{
    m_model = std::move(model);
    m_runSites.clear();
    m_sitesStale = true;
    if (m_model) setRange(m_model->tBegin(), m_model->tEnd());
}

void StatsWidget::showEvent(QShowEvent *e)
{
    QWidget::showEvent(e);
    if (m_sitesStale && m_tabs->currentWidget() == m_sitePage) updateCallSites();
}

void StatsWidget::showCallSites(bool wholeRun)
{
    m_tabs->setCurrentWidget(m_sitePage);
    QSignalBlocker b(m_wholeRun);
    m_wholeRun->setChecked(wholeRun);
    updateCallSites();
}

void StatsWidget::updateCallSites()
{
    m_sitesStale = false;
    m_sites->clearContents();
    m_sites->setRowCount(0);
    if (!m_model) return;
    const bool run = m_wholeRun->isChecked();
    if (run && m_runSites.empty()) m_runSites = m_model->timePerCallSite(m_model->tBegin(), m_model->tEnd());
    const std::vector<SiteTime> window = run ? std::vector<SiteTime>() : m_model->timePerCallSite(m_t0, m_t1);
    const std::vector<SiteTime> &rows = run ? m_runSites : window;
    const int n = static_cast<int>(std::min<size_t>(rows.size(), kMaxSiteRows));
    m_sites->setRowCount(n);
    for (int k = 0; k < n; ++k) {
        const SiteTime &st = rows[static_cast<size_t>(k)];
        auto *site = new QTableWidgetItem(st.site != 0 ? m_model->callSiteText(st.site) : tr("(unknown)"));
        site->setData(Qt::UserRole, st.site);
        if (st.site != 0) site->setToolTip(m_model->describeCallSite(st.site));
        const CategoryInfo &cat = m_model->categoryInfo(st.category);
        auto *routine = new QTableWidgetItem(cat.name);
        routine->setForeground(cat.color.darker(130));
        routine->setData(Qt::UserRole, st.category);
        auto *calls = new QTableWidgetItem(QString::number(st.count));
        calls->setData(Qt::UserRole, QVariant::fromValue<qulonglong>(st.count));
        calls->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        auto *time = new QTableWidgetItem(formatDuration(st.ns));
        time->setData(Qt::UserRole, st.ns);
        time->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_sites->setItem(k, SiteTextColumn, site);
        m_sites->setItem(k, SiteRoutineColumn, routine);
        m_sites->setItem(k, SiteCallsColumn, calls);
        m_sites->setItem(k, SiteTimeColumn, time);
    }
}

void StatsWidget::setRange(double t0, double t1)
{
    m_t0 = t0, m_t1 = t1;
    m_sitesStale = true;
    if (m_model && isVisible() && m_tabs->currentWidget() == m_sitePage && !m_wholeRun->isChecked()) updateCallSites();
    if (!m_model || (!isVisible() && m_load->rowCount() > 0)) return;
    const auto per = m_model->timePerCategory(t0, t1);
    // Columns: categories with time in the window, largest first (at most 12).
    std::vector<std::pair<double, int>> tot;
    for (int c = 0; c < m_model->categoryCount(); ++c) {
        double s = 0;
        for (const auto &row : per)
            s += row[c];
        if (s > 0) tot.push_back({ s, c });
    }
    std::sort(tot.rbegin(), tot.rend());
    if (tot.size() > 12) tot.resize(12);
    m_load->clear();
    m_load->setRowCount(m_model->rowCount());
    m_load->setColumnCount(static_cast<int>(tot.size()));
    for (size_t k = 0; k < tot.size(); ++k) {
        auto *h = new QTableWidgetItem(m_model->categoryInfo(tot[k].second).name);
        h->setForeground(m_model->categoryInfo(tot[k].second).color.darker(130));
        m_load->setHorizontalHeaderItem(static_cast<int>(k), h);
    }
    const double span = std::max(t1 - t0, 1.0);
    for (int r = 0; r < m_model->rowCount(); ++r) {
        m_load->setVerticalHeaderItem(r, new QTableWidgetItem(m_model->rowLabel(r)));
        for (size_t k = 0; k < tot.size(); ++k) {
            const double v = per[r][tot[k].second];
            auto *it = new QTableWidgetItem(
                QStringLiteral("%1 (%2%)").arg(formatDuration(v)).arg(100.0 * v / span, 0, 'f', 1));
            it->setData(Qt::UserRole, v);
            m_load->setItem(r, static_cast<int>(k), it);
        }
    }
    const int world = m_model->worldSize();
    const int n = std::min(world, 128); // a larger matrix is not readable as a table
    const auto mat = m_model->commMatrix(t0, t1);
    m_matrix->clear();
    m_matrix->setRowCount(n);
    m_matrix->setColumnCount(n);
    uint64_t mx = 1;
    for (uint64_t v : mat)
        mx = std::max(mx, v);
    for (int i = 0; i < n; ++i) {
        m_matrix->setHorizontalHeaderItem(i, new QTableWidgetItem(QString::number(i)));
        m_matrix->setVerticalHeaderItem(i, new QTableWidgetItem(QString::number(i)));
        for (int j = 0; j < n; ++j) {
            const uint64_t v = mat[static_cast<size_t>(i) * world + j];
            auto *it = new QTableWidgetItem(v ? QString::number(v) : QString());
            it->setData(Qt::UserRole, QVariant::fromValue<qulonglong>(v));
            if (v) it->setBackground(QColor::fromHsv(220, static_cast<int>(30 + 200.0 * v / mx), 255));
            m_matrix->setItem(i, j, it);
        }
    }
}

} // namespace upshot
