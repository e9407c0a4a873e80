// The time<->pixel mapping of the timeline: a plain value type, testable without a window.
#pragma once

#include <algorithm>
#include <cmath>

namespace upshot {

// Maps times (ns since the start of the run) to x (pixels from the left of the plot area).
class TimeScale
{
public:
    TimeScale() = default;
    TimeScale(double t0, double nsPerPixel, double width) : m_t0(t0), m_nsPerPixel(nsPerPixel), m_width(width) { }

    // Returns a scale showing [t0, t1] across width pixels.
    static TimeScale fit(double t0, double t1, double width)
    {
        width = std::max(width, 1.0);
        const double span = std::max(t1 - t0, kMinNsPerPixel * width);
        return TimeScale(t0, span / width, width);
    }

    double timeToX(double t) const { return (t - m_t0) / m_nsPerPixel; }
    double xToTime(double x) const { return m_t0 + x * m_nsPerPixel; }
    double durationToWidth(double ns) const { return ns / m_nsPerPixel; }

    // Zooms by factor (>1 zooms in) keeping the time under anchorX where it is.
    void zoom(double factor, double anchorX)
    {
        const double t = xToTime(anchorX);
        m_nsPerPixel = std::clamp(m_nsPerPixel / factor, kMinNsPerPixel, kMaxNsPerPixel);
        m_t0 = t - anchorX * m_nsPerPixel;
    }
    // Moves the view by dx pixels (positive shows later times).
    void pan(double dx) { m_t0 += dx * m_nsPerPixel; }
    // Changes the width in pixels keeping t0 and the resolution.
    void setWidth(double width) { m_width = std::max(width, 1.0); }
    // Keeps the view inside [lo, hi] when it is narrower than that span.
    void clampTo(double lo, double hi)
    {
        const double span = visibleSpan();
        if (span >= hi - lo) return;
        m_t0 = std::clamp(m_t0, lo, hi - span);
    }

    double t0() const { return m_t0; }
    double t1() const { return xToTime(m_width); }
    double nsPerPixel() const { return m_nsPerPixel; }
    double width() const { return m_width; }
    double visibleSpan() const { return m_nsPerPixel * m_width; }

    bool operator==(const TimeScale &o) const = default;

    static constexpr double kMinNsPerPixel = 1e-3;
    static constexpr double kMaxNsPerPixel = 1e15;

private:
    double m_t0 = 0;
    double m_nsPerPixel = 1;
    double m_width = 1;
};

} // namespace upshot
