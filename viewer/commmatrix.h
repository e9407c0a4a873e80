// The communication matrix of a window: bytes, messages or wait time between ranks, or between
// groups of ranks when there are more than a few hundred; with its CSV and heat-map forms.
#pragma once

#include <QImage>
#include <QString>

#include <cstdint>
#include <vector>

#include "rankgroups.h"
#include "tracemodel.h"

namespace upshot {

enum class MatrixValue { Bytes, Messages, WaitTime };

struct CommMatrix
{
    MatrixValue value = MatrixValue::Bytes;
    double t0 = 0, t1 = 0; // the window: messages sent inside it, waiting time clipped to it
    int size = 0; // rows = columns
    std::vector<QString> labels; // per index: "3" (a rank), or a group's or block's label
    std::vector<int> indexOfRank; // world rank -> index
    std::vector<double> cells; // [from * size + to]: sender to receiver; wait time: culprit to waiting rank
    bool grouped = false; // indices are groups or blocks of ranks
    QString note; // "wait states not analysed" when value is WaitTime and the model has none

    double at(int from, int to) const { return cells[static_cast<size_t>(from * size + to)]; }
    double total() const;
};

// The number and bytes of the messages sent inside [t0, t1] (the whole run when t1 <= t0): what
// the matrix of bytes and of messages add up to, and, for the whole run, `mpe stat`'s totals.
struct MessageTotals
{
    uint64_t messages = 0;
    uint64_t bytes = 0;
};
MessageTotals messageTotals(const TraceModel &model, double t0 = 0, double t1 = 0);

// The matrix of [t0, t1] (the whole run when t1 <= t0): per group of groups when given (null:
// per rank up to maxSize ranks, else blocks of consecutive ranks, at most maxSize of them).
CommMatrix buildCommMatrix(const TraceModel &model, double t0, double t1, MatrixValue value,
    const RankGroups *groups = nullptr, int maxSize = 256);

// The first message sent inside the matrix's window from index `from` to index `to`, or -1.
long firstMessageOfCell(const TraceModel &model, const CommMatrix &m, int from, int to);

// "from,to,value" lines after a header naming the value; labels as given.
QString commMatrixCsv(const CommMatrix &m);
// A heat map (white to dark blue, log scale), senders down the left, receivers along the top.
QImage commMatrixImage(const CommMatrix &m, QSize size);
// The cell under point pos of an image of the given size drawn by commMatrixImage, or {-1, -1}.
std::pair<int, int> commMatrixCellAt(const CommMatrix &m, QSize size, QPointF pos);
QString matrixValueName(MatrixValue v);

} // namespace upshot
