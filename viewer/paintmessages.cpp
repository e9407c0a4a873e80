// Message arrows, one by one or bundled when dense, one-sided transfers, and the selected message
// and wait-state instance drawn over them. Which messages are drawn is sampleMessages()'s choice.
#include <algorithm>
#include <cmath>

#include "lodfolder.h"
#include "paintlayers.h"
#include "waitstates.h"

namespace upshot {

using Arrow = TraceModel::ArrowSample;

namespace {

// Messages whose arrows share the slots and cells of both ends: drawn as one line.
struct Bundle
{
    int rs, rr, xs, xr; // slots (rows, or groups' rows), and cells of the two ends
    uint64_t n; // messages
    uint64_t bytes;
    uint64_t key; // rows and cells packed (cells clamped to 16 bits, ~0.5 M px off-screen)
    void pack()
    {
        auto cell16 = [](int c) { return static_cast<uint64_t>(std::clamp(c, -32768, 32767) + 32768); };
        key = (static_cast<uint64_t>(rs & 0xFFFF) << 48) | (static_cast<uint64_t>(rr & 0xFFFF) << 32)
            | (cell16(xs) << 16) | cell16(xr);
    }
};

} // namespace

// A bundle's label: its messages and bytes, "12 msg, 3.1 KB", "1.2k msg, 4.0 MB".
static QString bundleLabel(uint64_t n, uint64_t bytes)
{
    auto count = [](double x) {
        return x < 1000 ? QString::number(x, 'f', 0)
            : x < 1e6   ? QStringLiteral("%1k").arg(x / 1e3, 0, 'f', 1)
                        : QStringLiteral("%1M").arg(x / 1e6, 0, 'f', 1);
    };
    const double b = static_cast<double>(bytes);
    const QString size = b < 1e3 ? QStringLiteral("%1 B").arg(bytes)
        : b < 1e6                ? QStringLiteral("%1 KB").arg(b / 1e3, 0, 'f', 1)
        : b < 1e9                ? QStringLiteral("%1 MB").arg(b / 1e6, 0, 'f', 1)
                                 : QStringLiteral("%1 GB").arg(b / 1e9, 0, 'f', 1);
    return QStringLiteral("%1 msg, %2").arg(count(static_cast<double>(n)), size);
}
constexpr size_t kMaxBundleLabels = 16;

// Individual arrows, with their heads when long enough to show them.
static void paintArrows(QPainter &p, DirectCanvas &canvas, const TraceModel &model, const ViewState &v,
    const std::vector<Arrow> &vis, RenderStats &st)
{
    const QPen pen(arrowColor(), 0);
    p.setPen(pen);
    p.setBrush(arrowColor());
    for (const Arrow &m : vis) {
        const QPointF a(v.xOf(static_cast<double>(m.send_time)), v.rowCenter(model.rowOfTimeline(m.send_timeline)));
        const QPointF b(v.xOf(static_cast<double>(m.recv_time)), v.rowCenter(model.rowOfTimeline(m.recv_timeline)));
        canvas.line(a, b, arrowColor().rgb());
        p.setPen(pen);
        const QPointF d = b - a;
        const double len = std::hypot(d.x(), d.y());
        if (len > 12) {
            const QPointF u = d / len, n(-u.y(), u.x());
            p.drawPolygon(QPolygonF({ b, b - u * 7 + n * 3, b - u * 7 - n * 3 }));
        }
        ++st.arrows;
    }
    p.setBrush(Qt::NoBrush);
}

// Arrows whose ends share rows and cells are one bundle. Cells start `cell` (16) px wide and
// double while the bundles' lines would cost more than kPixelBudget pixels: a line's pixels sit
// in different image rows (a cache and TLB miss each), so pixels, not bundles, are what a dense
// frame pays for. Full views of a 64-rank ring end at ~64 px. Sorting and merging neighbours
// beats a hash map here (no allocation per bundle). Each arrow stands for `weight` messages.
static std::vector<Bundle> bundleArrows(const TraceModel &model, const ViewState &v, const QRect &plot,
    const std::vector<Arrow> &vis, size_t weight, double &cell)
{
    constexpr double kPixelBudget = 60000;
    std::vector<Bundle> bundles;
    bundles.reserve(vis.size());
    for (const Arrow &m : vis)
        bundles.push_back(
            { v.slotOfRow(model.rowOfTimeline(m.send_timeline)), v.slotOfRow(model.rowOfTimeline(m.recv_timeline)),
                static_cast<int>(std::floor(v.xOf(static_cast<double>(m.send_time)) / cell)),
                static_cast<int>(std::floor(v.xOf(static_cast<double>(m.recv_time)) / cell)), weight, m.bytes * weight,
                0 });
    auto merge = [&] {
        for (Bundle &b : bundles)
            b.pack();
        std::sort(bundles.begin(), bundles.end(), [](const Bundle &a, const Bundle &b) { return a.key < b.key; });
        size_t out = 0;
        for (size_t i = 0; i < bundles.size(); ++i) {
            if (out > 0 && bundles[out - 1].key == bundles[i].key) {
                bundles[out - 1].n += bundles[i].n;
                bundles[out - 1].bytes += bundles[i].bytes;
            } else {
                bundles[out++] = bundles[i];
            }
        }
        bundles.resize(out);
    };
    merge();
    // A line costs its pixels plus a setup (clipping) worth about 16 of them.
    auto pixels = [&] {
        double sum = 0;
        for (const Bundle &k : bundles)
            sum += 16
                + std::max(std::fabs(k.xr - k.xs) * cell,
                    std::min<double>(plot.height(), std::fabs(v.slotTop(k.rr) - v.slotTop(k.rs))));
        return sum;
    };
    while (cell < 1024 && pixels() > kPixelBudget) {
        for (Bundle &k : bundles)
            k.xs >>= 1, k.xr >>= 1; // >> floors negative cells too
        merge();
        cell *= 2;
    }
    return bundles;
}

// Bundles between two groups' rows say how many messages and bytes they carry: the heaviest
// first, where the label fits beside the line without covering another one.
static void paintBundleLabels(QPainter &p, const ViewState &v, const QRect &plot, const std::vector<Bundle> &bundles,
    double cell, size_t weight, RenderStats &st)
{
    std::vector<const Bundle *> between;
    for (const Bundle &k : bundles)
        if (k.rs != k.rr && v.groups->rowSlots()[static_cast<size_t>(k.rs)].isGroup()
            && v.groups->rowSlots()[static_cast<size_t>(k.rr)].isGroup())
            between.push_back(&k);
    const size_t top = std::min<size_t>(between.size(), 256);
    std::partial_sort(between.begin(), between.begin() + static_cast<long>(top), between.end(),
        [](const Bundle *a, const Bundle *b) { return a->n > b->n || (a->n == b->n && a->key < b->key); });
    std::vector<QRect> placed;
    const QString approx = weight > 1 ? QStringLiteral("~") : QString();
    const QFontMetrics lfm(p.font());
    for (size_t i = 0; i < top && placed.size() < kMaxBundleLabels; ++i) {
        const Bundle &k = *between[i];
        const QString text = approx + bundleLabel(k.n, k.bytes);
        const double half = v.rowHeight / 2;
        const QPointF mid((k.xs + k.xr + 1) * cell / 2, (v.slotTop(k.rs) + v.slotTop(k.rr)) / 2 + half);
        const QRect r(static_cast<int>(mid.x()) + 3, static_cast<int>(mid.y()) - lfm.height() / 2,
            lfm.horizontalAdvance(text) + 4, lfm.height());
        if (!plot.contains(r)
            || std::any_of(placed.begin(), placed.end(), [&](const QRect &o) { return o.intersects(r); }))
            continue;
        placed.push_back(r);
        p.fillRect(r, QColor(255, 255, 255));
        p.setPen(QColor(40, 40, 40));
        p.drawText(r, Qt::AlignCenter, text);
    }
    st.bundleLabels = placed.size();
}

void paintMessages(QPainter &p, DirectCanvas &canvas, const TraceModel &model, const ViewState &v, const FrameLayout &f,
    RenderStats &st)
{
    const QRect &plot = f.plot;
    const int firstSlot = f.firstSlot, lastSlot = f.lastSlot;
    const double t0 = v.scale.t0(), t1 = v.scale.t1();
    // Arrows: one per message when few are visible, else bundled per (rows, 16-pixel cells), from
    // the messages sampleMessages() chooses; those of rows out of view are left out.
    std::vector<Arrow> vis;
    const size_t weight = sampleMessages(model, t0, t1, kMaxArrowSample, [&](const Arrow &m) {
        if (static_cast<double>(m.recv_time) < t0) return;
        const int ss = v.slotOfRow(model.rowOfTimeline(m.send_timeline));
        const int sr = v.slotOfRow(model.rowOfTimeline(m.recv_timeline));
        if ((ss < firstSlot && sr < firstSlot) || (ss > lastSlot && sr > lastSlot)) return;
        // Inside one group's row: drawn only when asked for (View ▸ Messages inside a group).
        if (ss == sr && v.groups && !v.intraGroupMessages && v.groups->rowSlots()[static_cast<size_t>(ss)].isGroup())
            return;
        vis.push_back(m);
    });
    p.setRenderHint(QPainter::Antialiasing, false);
    // Individual arrows while they stay readable (about one per pixel of width, at least 1000).
    if (vis.size() <= static_cast<size_t>(std::max(1000, plot.width())))
        return paintArrows(p, canvas, model, v, vis, st);
    double cell = 16;
    const std::vector<Bundle> bundles = bundleArrows(model, v, plot, vis, weight, cell);
    for (const Bundle &k : bundles) {
        // Opaque (alpha blending lines costs ~3x): lighter grey for thin bundles, black for thick.
        const int grey = std::max(10, 150 - static_cast<int>(30 * std::log2(static_cast<double>(k.n))));
        const double half = v.rowHeight / 2;
        const QPointF a(k.xs * cell + cell / 2, v.slotTop(k.rs) + half),
            b(k.xr * cell + cell / 2, v.slotTop(k.rr) + half);
        canvas.line(a, b, qRgb(grey, grey, grey));
    }
    st.arrowBundles = bundles.size();
    st.arrows = vis.size() * weight;
    for (const Bundle &k : bundles)
        st.bundledMessages += k.n, st.bundledBytes += k.bytes;
    if (v.groups) paintBundleLabels(p, v, plot, bundles, cell, weight, st);
}

// One-sided transfers: a dashed orange arrow from the operation on the origin's row to the
// synchronisation that completed it, on the target's first row (never completed: not drawn).
// Transfers are sorted by start, so those starting after t1 end the walk; at most kMaxRma are
// drawn, an even sample beyond that.
void paintRma(QPainter &p, const TraceModel &model, const ViewState &v, const FrameLayout &f, RenderStats &st)
{
    const double t0 = v.scale.t0(), t1 = v.scale.t1();
    const int firstSlot = f.firstSlot, lastSlot = f.lastSlot;
    constexpr size_t kMaxRma = 20000;
    const auto &X = model.rmaTransfers();
    const size_t end
        = static_cast<size_t>(std::upper_bound(X.begin(), X.end(), t1, [](double t, const mpe::format::RmaTransfer &x) {
              return t < static_cast<double>(x.start);
          }) - X.begin());
    const size_t stride = std::max<size_t>(1, end / kMaxRma);
    const QPen pen(rmaArrowColor(), 2, Qt::DashLine); // not antialiased: pure colour, as the messages
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setBrush(rmaArrowColor());
    for (size_t i = 0; i < end; i += stride) {
        const mpe::format::RmaTransfer &x = X[i];
        if (x.complete < 0 || static_cast<double>(x.complete) < t0) continue;
        const int ro = model.rowOfTimeline(x.origin_timeline), rt = model.rowOf(static_cast<uint32_t>(x.target), 0);
        if (rt < 0) continue;
        const int so = v.slotOfRow(ro), sr = v.slotOfRow(rt);
        if ((so < firstSlot && sr < firstSlot) || (so > lastSlot && sr > lastSlot)) continue;
        const QPointF a(v.xOf(static_cast<double>(x.start)), v.rowCenter(ro));
        const QPointF b(v.xOf(static_cast<double>(x.complete)), v.rowCenter(rt));
        p.setPen(pen);
        p.drawLine(a, b);
        const QPointF d = b - a;
        const double len = std::hypot(d.x(), d.y());
        if (len > 12) {
            const QPointF u = d / len, n(-u.y(), u.x());
            p.setPen(Qt::NoPen);
            p.drawPolygon(QPolygonF({ b, b - u * 8 + n * 3.5, b - u * 8 - n * 3.5 }));
        }
        ++st.rmaArrows;
    }
    p.setBrush(Qt::NoBrush);
}

// The selected message: a thick amber line over its arrow.
void paintSelectedMessage(QPainter &p, const TraceModel &model, const ViewState &v)
{
    const auto &M = model.messages();
    if (v.selectedMessage >= 0 && static_cast<size_t>(v.selectedMessage) < M.size()) {
        const Message &m = M[static_cast<size_t>(v.selectedMessage)];
        p.setPen(QPen(QColor(255, 200, 0), 3));
        p.drawLine(QPointF(v.xOf(static_cast<double>(m.send_time)), v.rowCenter(model.rowOfTimeline(m.send_timeline))),
            QPointF(v.xOf(static_cast<double>(m.recv_time)), v.rowCenter(model.rowOfTimeline(m.recv_timeline))));
    }
}

// The selected wait-state instance: its waiting part framed, and what made it wait (the
// culprit's state, and for the point-to-point patterns the message's arrow) in its colour.
void paintSelectedWait(QPainter &p, const TraceModel &model, const ViewState &v)
{
    const auto &M = model.messages();
    if (const WaitStates *W = model.waits(); W && v.showWaits && v.selectedWait.valid()
        && v.selectedWait.row < W->rowCount() && v.selectedWait.index < W->spans(v.selectedWait.row).size()) {
        const WaitSpan &s = W->span(v.selectedWait);
        const QColor c = waitColor(s.pattern);
        p.setBrush(Qt::NoBrush);
        if (s.state != WaitSpan::kNone) {
            auto [y0, y1] = v.boxY(v.selectedWait.row, model.depth(v.selectedWait.row, s.state));
            const double a = v.xOf(static_cast<double>(s.start)), b = v.xOf(static_cast<double>(s.end));
            p.setPen(QPen(c.darker(170), 2));
            p.drawRect(QRectF(a, y0, std::max(b - a, 1.0), y1 - y0));
        }
        if (s.culpritRow >= 0 && s.culpritState != WaitSpan::kNone) {
            auto [y0, y1] = v.boxY(s.culpritRow, model.depth(s.culpritRow, s.culpritState));
            const double a = v.xOf(model.start(s.culpritRow, s.culpritState));
            const double b = v.xOf(model.end(s.culpritRow, s.culpritState));
            p.setPen(QPen(c, 3));
            p.drawRect(QRectF(a - 1, y0 - 1, std::max(b - a, 1.0) + 2, y1 - y0 + 2));
        }
        if (s.message != WaitSpan::kNone && s.message < M.size()) {
            const Message &m = M[s.message];
            const QPointF a(v.xOf(static_cast<double>(m.send_time)), v.rowCenter(model.rowOfTimeline(m.send_timeline)));
            const QPointF b(v.xOf(static_cast<double>(m.recv_time)), v.rowCenter(model.rowOfTimeline(m.recv_timeline)));
            p.setPen(QPen(c, 3));
            p.drawLine(a, b);
            const QPointF d = b - a;
            const double len = std::hypot(d.x(), d.y());
            if (len > 12) {
                const QPointF u = d / len, n(-u.y(), u.x());
                p.setPen(QPen(c, 1));
                p.setBrush(c);
                p.drawPolygon(QPolygonF({ b, b - u * 10 + n * 5, b - u * 10 - n * 5 }));
                p.setBrush(Qt::NoBrush);
            }
        }
    }
}

} // namespace upshot
