// The model's user-facing text: durations, row labels and the details of states, messages,
// events, folds and call sites.
#include "tracemodel.h"

#include <QRegularExpression>

#include <cmath>

namespace upshot {

using mpe::format::as;
using mpe::format::Event;
using mpe::format::RecordKind;
using mpe::format::State;

QString formatDuration(double ns, int precision)
{
    const double a = std::fabs(ns);
    if (a < 1e3) return QString::number(ns, 'g', precision + 1) + QStringLiteral(" ns");
    if (a < 1e6) return QString::number(ns / 1e3, 'g', precision + 1) + QStringLiteral(" µs");
    if (a < 1e9) return QString::number(ns / 1e6, 'g', precision + 1) + QStringLiteral(" ms");
    return QString::number(ns / 1e9, 'g', precision + 2) + QStringLiteral(" s");
}

QString TraceModel::rowLabel(int row) const
{
    const Row &T = m_rows[row];
    bool threaded
        = (row > 0 && m_rows[row - 1].rank == T.rank) || (row + 1 < rowCount() && m_rows[row + 1].rank == T.rank);
    return threaded ? QStringLiteral("rank %1.%2").arg(T.rank).arg(T.thread) : QStringLiteral("rank %1").arg(T.rank);
}

QString TraceModel::describeState(StateRef s) const
{
    if (!s.valid()) return {};
    const State st = state(s.row, s.index);
    QString text = QStringLiteral("%1 on %2\nstart %3\nduration %4\ndepth %5")
                       .arg(m_categories[categoryIndex(st.cat)].name, rowLabel(s.row),
                           formatDuration(static_cast<double>(st.start), 6),
                           formatDuration(static_cast<double>(st.end - st.start), 4))
                       .arg(st.depth);
    if (st.site != 0) text += QLatin1Char('\n') + describeCallSite(st.site);
    return text;
}

QString TraceModel::callSiteText(uint32_t id) const
{
    return id >= 1 && id <= m_sites.size() ? m_sites[id - 1].text : QString();
}

// A module whose file name says it is a shared library ("libcsite.so", "libmpi.so.12"): a frame
// in one is not in the program's own code, so the details name the library; frames in the
// executable need no module.
static bool isSharedLibrary(std::string_view module)
{
    static const QRegularExpression so(QStringLiteral("\\.so(\\.[0-9.]+)?$"));
    return so.match(QString::fromUtf8(mpe::base_name(module))).hasMatch();
}

// One frame as mpe::callsite_text() writes it ("csite.c:12 (csite_send)", or
// "libcsite.so+0x1a2b (csite_send)" without a line), and " in libcsite.so" for a shared library.
static QString frameText(const mpe::Frame &f)
{
    const QString function = QString::fromStdString(f.function);
    const QString module = QString::fromUtf8(mpe::base_name(f.module));
    if (f.file.empty())
        return QStringLiteral("%1+0x%2 (%3)")
            .arg(module, QString::number(static_cast<qulonglong>(f.offset), 16), function);
    QString text
        = QStringLiteral("%1:%2 (%3)").arg(QString::fromUtf8(mpe::base_name(f.file))).arg(f.line).arg(function);
    if (isSharedLibrary(f.module)) text += QStringLiteral(" in ") + module;
    return text;
}

QString TraceModel::describeCallSite(uint32_t id) const
{
    if (id < 1 || id > m_sites.size()) return {};
    const CallSiteInfo &site = m_sites[id - 1];
    if (site.frames.empty()) return QStringLiteral("call site ") + site.text;
    QString text = QStringLiteral("call site ") + frameText(site.frames[0]);
    for (size_t k = 1; k < site.frames.size(); ++k)
        text += QStringLiteral("\n  <- ") + frameText(site.frames[k]);
    return text;
}

QString TraceModel::describeMessage(size_t i) const
{
    const Message &m = m_messages[i];
    return QStringLiteral("message %1 -> %2\ntag %3, %4 bytes\nsent %5\nlatency %6")
        .arg(rank(static_cast<int>(m.send_timeline)))
        .arg(rank(static_cast<int>(m.recv_timeline)))
        .arg(m.tag)
        .arg(m.bytes)
        .arg(formatDuration(static_cast<double>(m.send_time), 6),
            formatDuration(static_cast<double>(m.recv_time - m.send_time)));
}

QString TraceModel::describeEvent(int row, size_t i) const
{
    const Event &e = m_rows[row].events[i];
    const QString at = formatDuration(static_cast<double>(e.time), 6);
    const QString name = m_categories[categoryIndex(e.cat)].name;
    switch (e.kind) {
    case RecordKind::kMarker: {
        const auto m = as<mpe::format::MarkerRecord>(e);
        return QStringLiteral("MPI_Pcontrol(%1) on %2 at %3, logging %4")
            .arg(m.level)
            .arg(rowLabel(row), at, m.logging_on ? "on" : "off");
    }
    case RecordKind::kUserEvent:
        return QStringLiteral("event %1 on %2 at %3, data %4")
                   .arg(name, rowLabel(row), at)
                   .arg(as<mpe::format::UserEventRecord>(e).data)
            + (e.site != 0 ? QLatin1Char('\n') + describeCallSite(e.site) : QString());
    case RecordKind::kCollective: {
        const auto c = as<mpe::format::CollectiveRecord>(e);
        return QStringLiteral("%1 on %2 at %3, root %4, %5 bytes").arg(name, rowLabel(row), at).arg(c.root).arg(c.sent);
    }
    case RecordKind::kCommCreate: {
        const auto c = as<mpe::format::CommCreateRecord>(e);
        return QStringLiteral("communicator %1 created (size %2) on %3 at %4")
            .arg(c.comm)
            .arg(c.size)
            .arg(rowLabel(row), at);
    }
    case RecordKind::kWinCreate: {
        const auto w = as<mpe::format::WinCreateRecord>(e);
        return QStringLiteral("window %1 created by %2 (%3 bytes here) on %4 at %5")
            .arg(w.window)
            .arg(name)
            .arg(w.size)
            .arg(rowLabel(row), at);
    }
    case RecordKind::kSend: {
        const auto s = as<mpe::format::SendRecord>(e);
        return QStringLiteral("unmatched send to %1, tag %2, %3 bytes on %4 at %5")
            .arg(s.dest)
            .arg(s.tag)
            .arg(s.bytes)
            .arg(rowLabel(row), at);
    }
    case RecordKind::kRecv: {
        const auto v = as<mpe::format::RecvRecord>(e);
        return QStringLiteral("unmatched receive from %1, tag %2, %3 bytes on %4 at %5")
            .arg(v.source)
            .arg(v.tag)
            .arg(v.bytes)
            .arg(rowLabel(row), at);
    }
    default:
        return QStringLiteral("event kind %1 on %2 at %3").arg(static_cast<int>(e.kind)).arg(rowLabel(row), at);
    }
}

QString TraceModel::describeFold(int row, const FoldSummary &f) const
{
    QString s = QStringLiteral("%1 states folded on %2\n%3 .. %4")
                    .arg(f.count)
                    .arg(rowLabel(row), formatDuration(f.start, 6), formatDuration(f.end, 6));
    for (size_t i = 0; i < f.timePerCategory.size() && i < 6; ++i)
        s += QStringLiteral("\n  %1: %2")
                 .arg(m_categories[f.timePerCategory[i].first].name, formatDuration(f.timePerCategory[i].second));
    return s;
}

} // namespace upshot
