// The communication matrix: filled from the model's messages or wait states, written as CSV or a heat map.
#include "commmatrix.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

#include "waitstates.h"

namespace upshot {

QString matrixValueName(MatrixValue v)
{
    switch (v) {
    case MatrixValue::Bytes:
        return QStringLiteral("bytes");
    case MatrixValue::Messages:
        return QStringLiteral("messages");
    case MatrixValue::WaitTime:
        return QStringLiteral("wait_ns");
    }
    return {};
}

double CommMatrix::total() const
{
    double s = 0;
    for (double c : cells)
        s += c;
    return s;
}

// The messages sent inside [t0, t1] (all when t1 <= t0): a range of the model's messages.
static std::pair<size_t, size_t> sentInside(const TraceModel &model, double t0, double t1)
{
    const auto &M = model.messages();
    if (t1 <= t0) return { 0, M.size() };
    const size_t b = partitionIndex(0, M.size(), [&](size_t i) { return static_cast<double>(M[i].send_time) < t0; });
    return { b, partitionIndex(b, M.size(), [&](size_t i) { return static_cast<double>(M[i].send_time) <= t1; }) };
}

MessageTotals messageTotals(const TraceModel &model, double t0, double t1)
{
    MessageTotals t;
    auto [b, e] = sentInside(model, t0, t1);
    for (size_t i = b; i < e; ++i) {
        ++t.messages;
        t.bytes += model.messages()[i].bytes;
    }
    return t;
}

CommMatrix buildCommMatrix(
    const TraceModel &model, double t0, double t1, MatrixValue value, const RankGroups *groups, int maxSize)
{
    CommMatrix m;
    m.value = value;
    m.t0 = t0, m.t1 = t1;
    int ranks = std::max(1, model.worldSize());
    for (int r = 0; r < model.rowCount(); ++r)
        ranks = std::max(ranks, static_cast<int>(model.rank(r)) + 1);
    m.indexOfRank.assign(static_cast<size_t>(ranks), 0);
    if (groups && groups->groupCount() > 0) {
        m.grouped = true;
        m.size = groups->groupCount();
        for (const RankGroup &g : groups->groups())
            m.labels.push_back(g.label);
        for (int r = 0; r < model.rowCount(); ++r)
            if (groups->groupOfRow(r) >= 0) m.indexOfRank[model.rank(r)] = groups->groupOfRow(r);
    } else if (ranks <= maxSize) {
        m.size = ranks;
        for (int r = 0; r < ranks; ++r) {
            m.labels.push_back(QString::number(r));
            m.indexOfRank[static_cast<size_t>(r)] = r;
        }
    } else {
        m.grouped = true;
        const int block = (ranks + maxSize - 1) / maxSize;
        m.size = (ranks + block - 1) / block;
        for (int b = 0; b < m.size; ++b)
            m.labels.push_back(QStringLiteral("ranks %1-%2").arg(b * block).arg(std::min(ranks, (b + 1) * block) - 1));
        for (int r = 0; r < ranks; ++r)
            m.indexOfRank[static_cast<size_t>(r)] = r / block;
    }
    m.cells.assign(static_cast<size_t>(m.size) * static_cast<size_t>(m.size), 0.0);
    auto index = [&](int row) { return m.indexOfRank[model.rank(row)]; };
    if (value == MatrixValue::WaitTime) {
        const WaitStates *W = model.waits();
        if (!W) {
            m.note = QStringLiteral("wait states not analysed");
            return m;
        }
        const double a = t1 > t0 ? t0 : model.tBegin(), b = t1 > t0 ? t1 : model.tEnd();
        for (int r = 0; r < W->rowCount() && r < model.rowCount(); ++r) {
            auto [i, e] = W->visible(r, a, b);
            for (; i < e; ++i) {
                const WaitSpan &s = W->spans(r)[i];
                if (s.culpritRow < 0 || s.culpritRow >= model.rowCount()) continue;
                const double ns = std::max(
                    0.0, std::min(static_cast<double>(s.end), b) - std::max(static_cast<double>(s.start), a));
                m.cells[static_cast<size_t>(index(s.culpritRow) * m.size + index(r))] += ns;
            }
        }
        return m;
    }
    auto [b, e] = sentInside(model, t0, t1);
    const auto &M = model.messages();
    for (size_t i = b; i < e; ++i) {
        const size_t cell = static_cast<size_t>(
            index(static_cast<int>(M[i].send_timeline)) * m.size + index(static_cast<int>(M[i].recv_timeline)));
        m.cells[cell] += value == MatrixValue::Bytes ? static_cast<double>(M[i].bytes) : 1.0;
    }
    return m;
}

long firstMessageOfCell(const TraceModel &model, const CommMatrix &m, int from, int to)
{
    auto [b, e] = sentInside(model, m.t0, m.t1);
    const auto &M = model.messages();
    for (size_t i = b; i < e; ++i)
        if (m.indexOfRank[model.rank(static_cast<int>(M[i].send_timeline))] == from
            && m.indexOfRank[model.rank(static_cast<int>(M[i].recv_timeline))] == to)
            return static_cast<long>(i);
    return -1;
}

QString commMatrixCsv(const CommMatrix &m)
{
    QString out = QStringLiteral("from,to,%1\n").arg(matrixValueName(m.value));
    for (int i = 0; i < m.size; ++i)
        for (int j = 0; j < m.size; ++j)
            if (const double v = m.at(i, j); v != 0)
                out += QStringLiteral("%1,%2,%3\n")
                           .arg(m.labels[static_cast<size_t>(i)], m.labels[static_cast<size_t>(j)])
                           .arg(v, 0, 'f', 0);
    return out;
}

// The square the cells fill inside an image of the given size (room for labels left and top).
static QRectF matrixArea(QSize size)
{
    const double margin = 60;
    const double side = std::max(1.0, std::min(size.width(), size.height()) - margin - 4);
    return QRectF(margin, margin, side, side);
}

QImage commMatrixImage(const CommMatrix &m, QSize size)
{
    QImage img(size, QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    const QRectF area = matrixArea(size);
    double maxV = 0;
    for (double c : m.cells)
        maxV = std::max(maxV, c);
    p.setPen(Qt::black);
    p.drawText(QRectF(4, 4, size.width() - 8, 20), Qt::AlignLeft | Qt::AlignVCenter,
        m.note.isEmpty() ? QStringLiteral("%1, sender (down) to receiver (across); max %2")
                               .arg(matrixValueName(m.value))
                               .arg(maxV, 0, 'g', 4)
                         : m.note);
    if (m.size == 0) return img;
    const double cell = area.width() / m.size;
    for (int i = 0; i < m.size; ++i)
        for (int j = 0; j < m.size; ++j) {
            const double v = m.at(i, j);
            if (v <= 0) continue;
            // Log scale: one message among millions still shows.
            const double s = maxV > 1 ? std::log1p(v) / std::log1p(maxV) : 1.0;
            const QColor c = QColor::fromRgbF(1 - 0.9 * s, 1 - 0.75 * s, 1 - 0.3 * s);
            p.fillRect(
                QRectF(area.left() + j * cell, area.top() + i * cell, std::max(cell, 1.0), std::max(cell, 1.0)), c);
        }
    p.setPen(QColor(120, 120, 120));
    p.drawRect(area);
    // Labels where they fit.
    const int every = std::max(1, static_cast<int>(std::ceil(14 / cell)));
    p.setPen(Qt::black);
    QFont f = p.font();
    f.setPixelSize(10);
    p.setFont(f);
    for (int i = 0; i < m.size; i += every) {
        const QString &l = m.labels[static_cast<size_t>(i)];
        p.drawText(
            QRectF(0, area.top() + i * cell, area.left() - 3, std::max(cell, 12.0)), Qt::AlignRight | Qt::AlignTop, l);
        p.save();
        p.translate(area.left() + i * cell, area.top() - 3);
        p.rotate(-90);
        p.drawText(QRectF(0, 0, area.top() - 26, std::max(cell, 12.0)), Qt::AlignLeft | Qt::AlignTop, l);
        p.restore();
    }
    return img;
}

std::pair<int, int> commMatrixCellAt(const CommMatrix &m, QSize size, QPointF pos)
{
    const QRectF area = matrixArea(size);
    if (m.size == 0 || !area.contains(pos)) return { -1, -1 };
    const double cell = area.width() / m.size;
    return { std::min(m.size - 1, static_cast<int>((pos.y() - area.top()) / cell)),
        std::min(m.size - 1, static_cast<int>((pos.x() - area.left()) / cell)) };
}

} // namespace upshot
