// The histogram of state durations in the visible window.
#include "histogramwidget.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QMouseEvent>
#include <QPainter>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>

namespace upshot {

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

} // namespace upshot
