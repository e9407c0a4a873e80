// The compare view's aligned time (iteration k of A over iteration k of B) and difference band.
#include "comparemap.h"

#include <algorithm>
#include <cmath>

namespace upshot {

AlignedTime AlignedTime::throughKnots(const std::vector<double> &a, const std::vector<double> &b)
{
    AlignedTime m;
    const size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(a[i]) || !std::isfinite(b[i])) continue;
        if (!m.m_a.empty() && (a[i] <= m.m_a.back() || b[i] <= m.m_b.back())) continue;
        m.m_a.push_back(a[i]);
        m.m_b.push_back(b[i]);
    }
    return m;
}

double AlignedTime::map(const std::vector<double> &from, const std::vector<double> &to, double t)
{
    if (from.empty()) return t;
    if (t <= from.front()) return t - from.front() + to.front();
    if (t >= from.back()) return t - from.back() + to.back();
    // from[i] <= t < from[i + 1]; a knot maps exactly onto its partner.
    const size_t i = static_cast<size_t>(std::upper_bound(from.begin(), from.end(), t) - from.begin()) - 1;
    if (t == from[i]) return to[i];
    return to[i] + (t - from[i]) * (to[i + 1] - to[i]) / (from[i + 1] - from[i]);
}

std::vector<AlignedTime::Piece> AlignedTime::pieces(double t0, double t1) const
{
    std::vector<Piece> out;
    if (t1 <= t0) return out;
    // The knots inside (t0, t1) cut it.
    std::vector<double> cuts { t0 };
    for (double k : m_a)
        if (k > t0 && k < t1) cuts.push_back(k);
    cuts.push_back(t1);
    for (size_t i = 0; i + 1 < cuts.size(); ++i)
        out.push_back({ cuts[i], cuts[i + 1], toB(cuts[i]), toB(cuts[i + 1]) });
    return out;
}

AlignedTime alignIterations(
    const mpe::analysis::Iterations &a, const mpe::analysis::Iterations &b, double aStart, double bStart, QString *note)
{
    const size_t n = std::min(a.count(), b.count());
    if (n < 1) {
        if (note) {
            const QString which = a.count() < 1 && b.count() < 1 ? QStringLiteral("either run")
                : a.count() < 1                                  ? QStringLiteral("A")
                                                                 : QStringLiteral("B");
            *note = QStringLiteral("No iterations found in %1: the runs are aligned at their starts").arg(which);
        }
        return AlignedTime::atStarts(aStart, bStart);
    }
    std::vector<double> ka, kb;
    for (size_t k = 0; k < n; ++k) {
        ka.push_back(static_cast<double>(a.begin(k)));
        kb.push_back(static_cast<double>(b.begin(k)));
    }
    ka.push_back(static_cast<double>(a.end(n - 1)));
    kb.push_back(static_cast<double>(b.end(n - 1)));
    if (note) {
        *note = QStringLiteral("%1 iterations aligned (A: %2; B: %3)")
                    .arg(n)
                    .arg(QString::fromStdString(a.basis), QString::fromStdString(b.basis));
        if (a.count() != b.count())
            *note += QStringLiteral("; A has %1, B %2: the first %3 aligned").arg(a.count()).arg(b.count()).arg(n);
    }
    return AlignedTime::throughKnots(ka, kb);
}

double DiffBand::maxRelative() const
{
    double m = 0;
    for (const Cell &c : cells)
        m = std::max(m, std::fabs(c.relative()));
    return m;
}

DiffBand diffBand(const mpe::analysis::Iterations &a, const mpe::analysis::diff::IterationComparison &c)
{
    DiffBand band;
    if (c.ranks == 0 || c.rows.empty() || c.ranks > a.ranks) return band;
    band.ranks = static_cast<int>(c.ranks);
    band.iterations = static_cast<int>(c.rows.size());
    band.cells.resize(c.rows.size() * c.ranks);
    for (size_t i = 0; i < c.rows.size(); ++i) {
        const mpe::analysis::diff::IterationRow &row = c.rows[i];
        for (uint32_t r = 0; r < c.ranks && r < row.delta_ns.size(); ++r) {
            DiffBand::Cell &cell = band.cells[i * c.ranks + r];
            cell.a0 = static_cast<double>(a.start_ns[row.k][r]);
            cell.a1 = static_cast<double>(a.end_ns[row.k][r]);
            cell.durationA = static_cast<double>(a.duration(row.k, r));
            cell.durationB = cell.durationA + row.delta_ns[r];
        }
    }
    return band;
}

QColor slowerColor()
{
    return QColor(200, 30, 30);
}

QColor fasterColor()
{
    return QColor(30, 90, 210);
}

QColor bandColor(double relative, double saturation)
{
    const double f = saturation > 0 ? std::clamp(std::fabs(relative) / saturation, 0.0, 1.0) : 0.0;
    const QColor full = relative > 0 ? slowerColor() : fasterColor();
    auto mix = [f](int c) { return static_cast<int>(std::lround(255 + (c - 255) * f)); };
    return QColor(mix(full.red()), mix(full.green()), mix(full.blue()));
}

} // namespace upshot
