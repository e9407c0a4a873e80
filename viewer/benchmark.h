// upshot --bench: what the window does with one log, timed (first frame, load, frames) and
// measured (memory), printed as "key value" lines for scripts and the benchmarks.
#pragma once

#include <QSize>
#include <QString>

namespace upshot {

// Opens path, builds its preview and then its full model, times frames of them and prints the
// figures to stdout; the exit status of `upshot --bench` (1 when the log cannot be opened).
int runBench(const QString &path, QSize size);
// The same for a log opened out of core (outofcore.h): the index, the summary's first frame, and
// the read and frames of views zoomed from the whole run down to 4^-9 of it.
int runOutOfCoreBench(const QString &path, QSize size);

} // namespace upshot
