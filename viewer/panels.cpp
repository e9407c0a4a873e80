// The legend model, the duration histogram and the window statistics.
#include "panels.h"

#include "countertracks.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace upshot {

LegendModel::LegendModel(QObject *parent) : QAbstractTableModel(parent) { }

void LegendModel::setModel(std::shared_ptr<TraceModel> model)
{
    beginResetModel();
    m_model = std::move(model);
    m_rows.clear();
    if (m_model) {
        for (int c = 0; c < m_model->categoryCount(); ++c)
            if (m_model->categoryInfo(c).count > 0) m_rows.push_back(c);
        std::stable_sort(m_rows.begin(), m_rows.end(),
            [&](int a, int b) { return m_model->categoryInfo(a).inclusiveNs > m_model->categoryInfo(b).inclusiveNs; });
    }
    endResetModel();
}

int LegendModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid() || !m_model) return 0;
    const CounterTracks *C = m_model->counters();
    return static_cast<int>(m_rows.size() + (C ? C->counters().size() : 0));
}

int LegendModel::counterAt(int row) const
{
    const int k = row - static_cast<int>(m_rows.size());
    return m_model && m_model->counters() && k >= 0 && k < static_cast<int>(m_model->counters()->counters().size())
        ? k
        : -1;
}

// The legend row of a counter: its checkbox shows or hides its tracks.
static QVariant counterData(const CounterInfo &c, int column, int role)
{
    if (column == LegendModel::Name) {
        if (role == Qt::DisplayRole) return c.name;
        if (role == Qt::DecorationRole) return c.color;
        if (role == Qt::CheckStateRole) return c.visible ? Qt::Checked : Qt::Unchecked;
        if (role == Qt::ToolTipRole) return QObject::tr("counter track: %1").arg(c.description);
    } else if (column == LegendModel::Count && role == Qt::DisplayRole) {
        return QVariant::fromValue<qulonglong>(c.samples);
    } else if (column == LegendModel::Inclusive && role == Qt::DisplayRole) {
        return QObject::tr("max %1").arg(c.maxLevel, 0, 'g', 10);
    }
    return {};
}

int LegendModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LegendModel::data(const QModelIndex &index, int role) const
{
    if (!m_model || !index.isValid() || index.row() >= rowCount()) return {};
    if (const int k = counterAt(index.row()); k >= 0)
        return counterData(m_model->counters()->counters()[static_cast<size_t>(k)], index.column(), role);
    const CategoryInfo &c = m_model->categoryInfo(category(index.row()));
    switch (index.column()) {
    case Name:
        if (role == Qt::DisplayRole) return c.name;
        if (role == Qt::DecorationRole) return c.color;
        if (role == Qt::CheckStateRole) return c.visible ? Qt::Checked : Qt::Unchecked;
        if (role == Qt::ToolTipRole) return c.isState ? tr("state") : tr("event");
        break;
    case Searchable:
        if (role == Qt::CheckStateRole) return c.searchable ? Qt::Checked : Qt::Unchecked;
        break;
    case Count:
        if (role == Qt::DisplayRole) return QVariant::fromValue<qulonglong>(c.count);
        break;
    case Inclusive:
        if (role == Qt::DisplayRole) return formatDuration(c.inclusiveNs);
        if (role == Qt::UserRole) return c.inclusiveNs;
        break;
    case Exclusive:
        if (role == Qt::DisplayRole) return formatDuration(c.exclusiveNs);
        if (role == Qt::UserRole) return c.exclusiveNs;
        break;
    }
    if (role == Qt::TextAlignmentRole && index.column() >= Count) return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

bool LegendModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (!m_model || !index.isValid() || index.row() >= rowCount()) return false;
    if (const int k = counterAt(index.row()); k >= 0) {
        CounterInfo &c = m_model->counters()->counter(k);
        if (role == Qt::CheckStateRole && index.column() == Name)
            c.visible = value.toInt() == Qt::Checked;
        else if (role == Qt::DecorationRole && index.column() == Name && value.canConvert<QColor>())
            c.color = value.value<QColor>();
        else
            return false;
        emit dataChanged(index, index, { role });
        emit countersChanged();
        return true;
    }
    CategoryInfo &c = m_model->categoryInfo(category(index.row()));
    if (role == Qt::CheckStateRole && index.column() == Name)
        c.visible = value.toInt() == Qt::Checked;
    else if (role == Qt::CheckStateRole && index.column() == Searchable)
        c.searchable = value.toInt() == Qt::Checked;
    else if (role == Qt::DecorationRole && index.column() == Name && value.canConvert<QColor>())
        c.color = value.value<QColor>();
    else
        return false;
    emit dataChanged(index, index, { role });
    emit categoriesChanged();
    return true;
}

Qt::ItemFlags LegendModel::flags(const QModelIndex &index) const
{
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == Name || (index.column() == Searchable && counterAt(index.row()) < 0))
        f |= Qt::ItemIsUserCheckable;
    return f;
}

QVariant LegendModel::headerData(int section, Qt::Orientation o, int role) const
{
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, o, role);
    static const char *names[] = { "Category", "Search", "Count", "Incl.", "Excl." };
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

HistogramWidget::HistogramWidget(QWidget *parent) : QWidget(parent)
{
    auto *top = new QHBoxLayout;
    m_cats = new QComboBox(this);
    m_cats->setObjectName("histogramCategory");
    m_bins = new QSpinBox(this);
    m_bins->setRange(1, 500);
    m_bins->setValue(40);
    m_bins->setPrefix(tr("bins "));
    m_logX = new QCheckBox(tr("log x"), this);
    m_logX->setChecked(true);
    m_logY = new QCheckBox(tr("log y"), this);
    top->addWidget(m_cats, 1);
    top->addWidget(m_bins);
    top->addWidget(m_logX);
    top->addWidget(m_logY);
    m_sites = new QComboBox(this);
    m_sites->setObjectName("histogramCallSite");
    m_sites->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_sites->setMinimumContentsLength(16);
    m_sites->hide();
    auto *lay = new QVBoxLayout(this);
    lay->addLayout(top);
    lay->addWidget(m_sites);
    lay->addStretch(1);
    setMinimumSize(260, 180);
    connect(m_cats, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_category = m_cats->itemData(i).isValid() ? m_cats->itemData(i).toInt() : -1;
        recompute();
    });
    connect(m_sites, &QComboBox::currentIndexChanged, this, [this](int i) {
        m_site = m_sites->itemData(i).isValid() ? m_sites->itemData(i).toLongLong() : -1;
        recompute();
    });
    connect(m_bins, &QSpinBox::valueChanged, this, [this] { recompute(); });
    connect(m_logX, &QCheckBox::toggled, this, [this] { recompute(); });
    connect(m_logY, &QCheckBox::toggled, this, [this] { update(); });
}

void HistogramWidget::setModel(std::shared_ptr<TraceModel> model)
{
    m_model = std::move(model);
    QSignalBlocker b(m_cats);
    m_cats->clear();
    m_cats->addItem(tr("all visible states"), -1);
    if (m_model) {
        for (int c = 0; c < m_model->categoryCount(); ++c)
            if (m_model->categoryInfo(c).isState && m_model->categoryInfo(c).count > 0)
                m_cats->addItem(m_model->categoryInfo(c).name, c);
        m_t0 = m_model->tBegin(), m_t1 = m_model->tEnd();
    }
    m_category = -1;
    {
        // Sites with states, most time first.
        QSignalBlocker bs(m_sites);
        m_sites->clear();
        m_sites->addItem(tr("all call sites"), qlonglong(-1));
        std::vector<uint32_t> ids;
        for (int k = 1; m_model && k <= m_model->callSiteCount(); ++k)
            if (m_model->callSite(k).count > 0) ids.push_back(static_cast<uint32_t>(k));
        std::stable_sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) {
            return m_model->callSite(a).inclusiveNs > m_model->callSite(b).inclusiveNs;
        });
        for (uint32_t id : ids) {
            m_sites->addItem(m_model->callSite(id).text, qlonglong(id));
            m_sites->setItemData(m_sites->count() - 1, m_model->describeCallSite(id), Qt::ToolTipRole);
        }
        m_sites->setVisible(!ids.empty());
    }
    m_site = -1;
    recompute();
}

void HistogramWidget::setRange(double t0, double t1)
{
    m_t0 = t0, m_t1 = t1;
    if (isVisible()) recompute();
}

void HistogramWidget::setCategory(int category)
{
    const int i = m_cats->findData(category);
    if (i >= 0) m_cats->setCurrentIndex(i);
    m_category = category;
    recompute();
}

void HistogramWidget::setCallSite(int64_t site)
{
    const int i = m_sites->findData(qlonglong(site));
    QSignalBlocker b(m_sites);
    m_sites->setCurrentIndex(std::max(i, 0));
    m_site = site;
    recompute();
}

void HistogramWidget::setBins(int bins)
{
    m_bins->setValue(bins);
    recompute();
}
void HistogramWidget::setLogX(bool on)
{
    m_logX->setChecked(on);
    recompute();
}
void HistogramWidget::setLogY(bool on)
{
    m_logY->setChecked(on);
    update();
}

std::vector<bool> HistogramWidget::selection() const
{
    std::vector<bool> sel;
    if (!m_model) return sel;
    sel.assign(static_cast<size_t>(m_model->categoryCount()), false);
    for (int c = 0; c < m_model->categoryCount(); ++c)
        sel[c]
            = m_category < 0 ? (m_model->categoryInfo(c).visible && m_model->categoryInfo(c).isState) : c == m_category;
    return sel;
}

void HistogramWidget::recompute()
{
    m_selectedBar = -1;
    if (m_model)
        m_hist = m_model->histogram(selection(), m_t0, m_t1, m_bins->value(), m_logX->isChecked(), m_site);
    else
        m_hist = {};
    update();
}

QRect HistogramWidget::chartRect() const
{
    const int top = (m_sites->isHidden() ? m_cats : m_sites)->geometry().bottom() + 8;
    return QRect(44, top, width() - 52, height() - top - 24);
}

int HistogramWidget::barAt(double x) const
{
    const QRect r = chartRect();
    const int n = static_cast<int>(m_hist.counts.size());
    if (n == 0 || x < r.left() || x >= r.right()) return -1;
    return std::clamp(static_cast<int>((x - r.left()) * n / r.width()), 0, n - 1);
}

void HistogramWidget::selectBar(int i)
{
    m_selectedBar = i;
    Highlight h;
    if (i >= 0 && i < static_cast<int>(m_hist.counts.size())) {
        h.categories = selection();
        auto [lo, hi] = m_hist.binRange(i);
        h.lo = lo, h.hi = hi;
        h.site = m_site;
    }
    update();
    emit highlightRequested(h);
}

void HistogramWidget::mousePressEvent(QMouseEvent *e)
{
    selectBar(barAt(e->position().x()));
}

void HistogramWidget::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    const QRect r = chartRect();
    p.fillRect(r, Qt::white);
    p.setPen(Qt::gray);
    p.drawRect(r.adjusted(0, 0, -1, -1));
    const int n = static_cast<int>(m_hist.counts.size());
    if (n == 0 || m_hist.total == 0) {
        p.drawText(r, Qt::AlignCenter, tr("no states in the view"));
        return;
    }
    const uint64_t mx = *std::max_element(m_hist.counts.begin(), m_hist.counts.end());
    const bool logY = m_logY->isChecked();
    auto height = [&](uint64_t c) {
        if (c == 0) return 0.0;
        return logY ? std::log10(1.0 + c) / std::log10(1.0 + mx) : static_cast<double>(c) / mx;
    };
    for (int i = 0; i < n; ++i) {
        const double x0 = r.left() + static_cast<double>(r.width()) * i / n;
        const double x1 = r.left() + static_cast<double>(r.width()) * (i + 1) / n;
        const double h = height(m_hist.counts[i]) * (r.height() - 2);
        p.fillRect(QRectF(x0, r.bottom() - h, std::max(1.0, x1 - x0 - 1), h),
            i == m_selectedBar ? QColor(255, 0, 255) : QColor(70, 110, 200));
    }
    p.setPen(Qt::black);
    p.drawText(QRect(r.left(), r.bottom() + 2, r.width() / 2, 20), Qt::AlignLeft, formatDuration(m_hist.lo));
    p.drawText(QRect(r.center().x(), r.bottom() + 2, r.width() / 2, 20), Qt::AlignRight, formatDuration(m_hist.hi));
    p.drawText(QRect(0, r.top(), 40, 20), Qt::AlignRight, QString::number(mx));
    p.drawText(QRect(0, r.bottom() - 20, 40, 20), Qt::AlignRight, QStringLiteral("0"));
    if (m_selectedBar >= 0) {
        auto [lo, hi] = m_hist.binRange(m_selectedBar);
        p.drawText(r.adjusted(4, 2, -4, 0), Qt::AlignTop | Qt::AlignRight,
            tr("%1 states, %2 .. %3").arg(m_hist.counts[m_selectedBar]).arg(formatDuration(lo), formatDuration(hi)));
    }
}

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

WaitStatesWidget::WaitStatesWidget(QWidget *parent) : QWidget(parent)
{
    m_status = new QLabel(this);
    m_status->setObjectName("waitsStatus");
    m_status->setWordWrap(true);
    m_table = new QTableWidget(kWaitPatterns, ColumnCount, this);
    m_table->setObjectName("waitsTable");
    m_table->setHorizontalHeaderLabels({ tr("Pattern"), tr("In view"), tr("Count"), tr("Whole run") });
    const QString tips[ColumnCount] = { tr("Click a pattern to frame its instances; F3 then steps through them"),
        tr("Waiting time inside the visible window"), tr("Instances overlapping the visible window"),
        tr("Waiting time over the whole run, and its share of the MPI time") };
    for (int c = 0; c < ColumnCount; ++c)
        m_table->horizontalHeaderItem(c)->setToolTip(tips[c]);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->setWordWrap(false);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    for (int p = 0; p < kWaitPatterns; ++p) {
        auto *name = new QTableWidgetItem(waitPatternName(p));
        name->setData(Qt::DecorationRole, waitColor(p));
        name->setData(Qt::UserRole, p);
        m_table->setItem(p, PatternColumn, name);
        for (int c = TimeColumn; c < ColumnCount; ++c) {
            auto *it = new QTableWidgetItem;
            it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            m_table->setItem(p, c, it);
        }
    }
    auto *lay = new QVBoxLayout(this);
    lay->setContentsMargins(2, 2, 2, 2);
    lay->addWidget(m_status);
    lay->addWidget(m_table);
    connect(m_table, &QTableWidget::cellClicked, this,
        [this](int row, int) { selectPattern(row == m_selected ? -1 : row); });
    setModel(nullptr);
}

void WaitStatesWidget::setModel(std::shared_ptr<TraceModel> model)
{
    m_model = std::move(model);
    m_selected = -1;
    m_table->clearSelection();
    if (m_model) m_t0 = m_model->tBegin(), m_t1 = m_model->tEnd();
    const WaitStates *W = m_model ? m_model->waits() : nullptr;
    m_table->setEnabled(W != nullptr);
    if (W)
        setStatus(tr("%1 instances; MPI time %2").arg(W->instanceCount()).arg(formatDuration(W->mpiNs())));
    else
        setStatus(m_model ? tr("Not analyzed") : tr("No logfile"));
    for (int p = 0; p < kWaitPatterns; ++p) {
        QString run;
        if (W) {
            const WaitTotal &t = W->runTotals()[static_cast<size_t>(p)];
            run = t.instances == 0 ? QStringLiteral("–")
                                   : tr("%1 (%2%)")
                                         .arg(formatDuration(t.ns))
                                         .arg(W->mpiNs() > 0 ? 100.0 * t.ns / W->mpiNs() : 0.0, 0, 'f', 1);
            m_table->item(p, RunColumn)->setData(Qt::UserRole, t.ns);
        }
        m_table->item(p, RunColumn)->setText(run);
    }
    m_stale = true;
    refresh();
}

void WaitStatesWidget::setStatus(const QString &text)
{
    m_status->setText(text);
}

QString WaitStatesWidget::status() const
{
    return m_status->text();
}

void WaitStatesWidget::setRange(double t0, double t1)
{
    m_t0 = t0, m_t1 = t1;
    m_stale = true;
    if (isVisible()) refresh();
}

void WaitStatesWidget::showEvent(QShowEvent *e)
{
    QWidget::showEvent(e);
    if (m_stale) refresh();
}

void WaitStatesWidget::refresh()
{
    m_stale = false;
    const WaitStates *W = m_model ? m_model->waits() : nullptr;
    m_window = W ? W->windowTotals(m_t0, m_t1) : WaitTotals {};
    for (int p = 0; p < kWaitPatterns; ++p) {
        const WaitTotal &t = m_window[static_cast<size_t>(p)];
        QTableWidgetItem *time = m_table->item(p, TimeColumn), *n = m_table->item(p, InstancesColumn);
        time->setText(W ? (t.instances ? formatDuration(t.ns) : QStringLiteral("–")) : QString());
        time->setData(Qt::UserRole, t.ns);
        n->setText(W ? QString::number(t.instances) : QString());
        n->setData(Qt::UserRole, QVariant::fromValue<qulonglong>(t.instances));
    }
}

void WaitStatesWidget::selectPattern(int pattern)
{
    m_selected = pattern >= 0 && pattern < kWaitPatterns ? pattern : -1;
    if (m_selected >= 0)
        m_table->selectRow(m_selected);
    else
        m_table->clearSelection();
    emit patternActivated(m_selected);
}

CommMatrixWidget::CommMatrixWidget(QWidget *parent) : QWidget(parent)
{
    setMinimumSize(200, 200);
    setToolTip(tr("Sender down, receiver across; click a cell for its first message in the view"));
}

void CommMatrixWidget::setModel(std::shared_ptr<TraceModel> model)
{
    m_model = std::move(model);
    m_groups.reset();
    if (m_model) m_t0 = m_model->tBegin(), m_t1 = m_model->tEnd();
    refresh();
}

void CommMatrixWidget::setRange(double t0, double t1)
{
    m_t0 = t0, m_t1 = t1;
    refresh();
}

void CommMatrixWidget::setGroups(std::shared_ptr<RankGroups> groups)
{
    m_groups = std::move(groups);
    refresh();
}

void CommMatrixWidget::setValue(MatrixValue v)
{
    m_value = v;
    refresh();
}

void CommMatrixWidget::refresh()
{
    // O(messages in the window): only while shown.
    m_stale = true;
    if (!isVisible()) return;
    m_matrix = m_model ? buildCommMatrix(*m_model, m_t0, m_t1, m_value, m_groups.get()) : CommMatrix {};
    m_stale = false;
    update();
}

void CommMatrixWidget::showEvent(QShowEvent *)
{
    if (m_stale) refresh();
}

void CommMatrixWidget::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.drawImage(0, 0, commMatrixImage(m_matrix, size()));
}

void CommMatrixWidget::mousePressEvent(QMouseEvent *e)
{
    if (!m_model) return;
    auto [from, to] = commMatrixCellAt(m_matrix, size(), e->position());
    if (from < 0) return;
    emit messageChosen(m_value == MatrixValue::WaitTime ? -1 : firstMessageOfCell(*m_model, m_matrix, from, to));
}

} // namespace upshot
