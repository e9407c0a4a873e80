// The histogram of state durations in the visible window.
#pragma once

#include <QWidget>

#include <memory>

#include "tracemodel.h"

class QCheckBox;
class QComboBox;
class QSpinBox;

namespace upshot {

// Histogram of the durations of the chosen states in the visible window.
class HistogramWidget : public QWidget
{
    Q_OBJECT
public:
    explicit HistogramWidget(QWidget *parent = nullptr);
    void setModel(std::shared_ptr<TraceModel> model);
    // Recomputes for the window [t0, t1] (the range follows the view).
    void setRange(double t0, double t1);
    void setCategory(int category); // -1 = all visible states
    void setCallSite(int64_t site); // -1 = all call sites
    int64_t callSite() const { return m_site; }
    void setBins(int bins);
    void setLogX(bool on);
    void setLogY(bool on);
    const Histogram &histogram() const { return m_hist; }
    // The bar under widget x in the chart, or -1.
    int barAt(double x) const;
    // Selects bar i: emits the highlight of its instances.
    void selectBar(int i);

signals:
    void highlightRequested(const upshot::Highlight &h);

protected:
    void paintEvent(QPaintEvent *) override;
    void mousePressEvent(QMouseEvent *) override;

private:
    void recompute();
    QRect chartRect() const;
    std::vector<bool> selection() const;

    std::shared_ptr<TraceModel> m_model;
    Histogram m_hist;
    double m_t0 = 0, m_t1 = 0;
    int m_category = -1, m_selectedBar = -1;
    int64_t m_site = -1;
    QComboBox *m_cats;
    QComboBox *m_sites; // hidden when the log has no call sites
    QSpinBox *m_bins;
    QCheckBox *m_logX, *m_logY;
};

} // namespace upshot
