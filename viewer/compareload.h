// Loads what the compare view shows of two runs: B's model, both runs' iterations
// (mpe/iterations.h), the aligned time and band they give (comparemap.h) and the diff table's rows
// (mpe/diff.h). Runs on any thread; no widgets.
#pragma once

#include <QSize>
#include <QString>

#include <memory>
#include <vector>

#include "comparepaint.h"
#include "comparetable.h"
#include "mpe/status.h"

namespace upshot {

struct CompareData
{
    CompareScene scene;
    std::vector<CompareRow> rows; // routines and call sites, most changed first
    QString rowsNote; // why the table is empty or partial ("" when it is complete)
};

// Compares the log at aPath (whose model, when given, is reused) with the log at bPath. B is read
// first, so that a B that cannot be read fails before A is touched. Each log is decoded once, in
// one chunk pass that feeds its model (unless given), its diff model and its iterations. Errors:
// the reader's, the message starting with the path that failed. Runs without iterations are
// aligned at their starts (scene.note says so).
mpe::StatusOr<std::shared_ptr<CompareData>> loadCompare(
    const QString &aPath, std::shared_ptr<TraceModel> aModel, const QString &bPath);

// Writes the compare picture of the logs at aPath and bPath to out (.svg: an SVG drawing, else an
// image in the format of its suffix) with no display; returns a one-line summary ("wrote ...").
// Errors: loadCompare()'s, and io-error when out cannot be written.
mpe::StatusOr<QString> exportCompare(const QString &aPath, const QString &bPath, const QString &out, QSize size);

} // namespace upshot
