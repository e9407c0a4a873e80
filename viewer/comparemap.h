// The compare view's aligned time and difference band: a piecewise-linear map from run A's times to
// run B's through their iteration boundaries, and per rank and iteration how much slower or faster
// B is; plain value types, tested without a window (docs/compare.md).
#pragma once

#include <QColor>
#include <QString>

#include <vector>

#include "mpe/diff.h"
#include "mpe/iterations.h"

namespace upshot {

// Maps times of run A (ns since its start) to times of run B through matching knots: the
// boundaries of iteration k of A and of B. Between two knots the map is linear; before the first
// and after the last it keeps the offset of that knot (slope 1). No knot: B's time is A's.
// Cost: O(log knots) per time.
class AlignedTime
{
public:
    AlignedTime() = default;
    // Knots a[i] <-> b[i]. Pairs that are not strictly after the previous kept pair in both runs
    // are dropped (iterations that overlap because their ranks are skewed), so the map stays
    // monotonic and invertible.
    static AlignedTime throughKnots(const std::vector<double> &a, const std::vector<double> &b);
    // One knot: the runs aligned at their starts.
    static AlignedTime atStarts(double aStart, double bStart) { return throughKnots({ aStart }, { bStart }); }

    double toB(double tA) const { return map(m_a, m_b, tA); }
    double toA(double tB) const { return map(m_b, m_a, tB); }
    int knotCount() const { return static_cast<int>(m_a.size()); }
    const std::vector<double> &knotsA() const { return m_a; }
    const std::vector<double> &knotsB() const { return m_b; }

    // A stretch of A's time on which the map is linear: [a0, a1] of A over [b0, b1] of B.
    struct Piece
    {
        double a0, a1, b0, b1;
    };
    // The linear pieces covering [t0, t1] of A's time, in order, clipped to it.
    std::vector<Piece> pieces(double t0, double t1) const;

private:
    static double map(const std::vector<double> &from, const std::vector<double> &to, double t);
    std::vector<double> m_a, m_b;
};

// The map through the first min(count) iterations of both runs (mpe::analysis::find_iterations()):
// knots at each iteration's begin() and at the last one's end(). Fewer than one iteration in either run: the runs
// aligned at aStart and bStart. *note says which (for the view's caption).
AlignedTime alignIterations(const mpe::analysis::Iterations &a, const mpe::analysis::Iterations &b, double aStart,
    double bStart, QString *note = nullptr);

// The difference band: for rank r and iteration k, B's duration of the iteration against A's, as
// the shared diff model compares them (mpe::analysis::diff::compare_iterations()).
struct DiffBand
{
    int ranks = 0, iterations = 0;
    struct Cell
    {
        double a0 = 0, a1 = 0; // the iteration's span on that rank in A (where the cell is drawn)
        double durationA = 0, durationB = 0; // ns
        // (B - A) / A: > 0 slower in B, < 0 faster; 0 when A's duration is 0.
        double relative() const { return durationA > 0 ? (durationB - durationA) / durationA : 0; }
    };
    std::vector<Cell> cells; // [k * ranks + r]
    const Cell &cell(int rank, int k) const { return cells[static_cast<size_t>(k) * ranks + rank]; }
    // The largest |relative()| of all cells (the legend's scale).
    double maxRelative() const;
};
// The band of A's iterations and their comparison with B's: one column per compared iteration,
// none when the runs have different rank counts (the comparison has no per-rank columns then).
DiffBand diffBand(const mpe::analysis::Iterations &a, const mpe::analysis::diff::IterationComparison &c);

// The band's colour for a relative change: white at 0, towards red when B is slower and towards
// blue when B is faster, full at |relative| >= saturation (clamped).
QColor bandColor(double relative, double saturation);
// The hues the band uses (the legend and the tests name them).
QColor slowerColor();
QColor fasterColor();

} // namespace upshot
