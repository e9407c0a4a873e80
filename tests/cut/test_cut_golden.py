"""`mpe cut` on the checked-in golden logs (tests/merge/golden/, format versions 1, 2, 5 and 6; the
v6 one has skewed clocks that the reader's causality repair shifts): without a selection the cut
prints exactly the golden text; cut by ranks and by time it prints the golden lines restricted to
what it keeps, at the same times (the repair's shifts move into the cut's clocks; for v6's
clocks, which contradict each other, the same lines but for their times); every command reads the
cuts. No MPI."""
import glob
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cutcheck  # noqa: E402
from cutcheck import mpitest  # noqa: E402

GOLDEN = os.path.join(HERE, "..", "merge", "golden")

work = tempfile.mkdtemp(prefix="mpecut-")
logs = sorted(glob.glob(os.path.join(GOLDEN, "v*-*.mpelog")))
mpitest.expect(len(logs) >= 4, "the golden logs: %r" % logs)
for log in logs:
    name = os.path.basename(log)[:-len(".mpelog")]
    with open(os.path.join(GOLDEN, name + ".txt")) as f:
        golden = f.read().splitlines()
    out = os.path.join(work, name + ".mpelog")
    cutcheck.cut(log, out)
    cutcheck.check_lines(cutcheck.print_lines(out), golden, name + " without a selection")
    cutcheck.reads_everywhere(out, work)
    # v6-skewed: its clocks contradict each other (docs/cut.md).
    exact = cutcheck.stat_json(log)["messages"]["backward"] == 0

    ranks = sorted({cutcheck.parse(x)[1] for x in golden})
    kept = set(ranks[1:3]) if len(ranks) > 2 else {ranks[-1]}
    spec = ",".join(str(r) for r in sorted(kept))
    cutcheck.cut(log, out, "--ranks", spec)
    cutcheck.check_lines(cutcheck.print_lines(out), cutcheck.expected(golden, lambda r, t: r in kept, lambda r: r in kept),
                         "%s --ranks %s" % (name, spec), exact)
    cutcheck.reads_everywhere(out, work)

    times = [cutcheck.parse(x)[0] for x in golden]
    lo = min(times) + (max(times) - min(times)) * 3 // 10
    hi = min(times) + (max(times) - min(times)) * 7 // 10
    cutcheck.cut(log, out, "--from", "%dns" % lo, "--to", "%dns" % hi)
    cutcheck.check_lines(cutcheck.print_lines(out), cutcheck.expected(golden, lambda r, t: lo <= t <= hi, lambda r: True),
                         "%s --from %dns --to %dns" % (name, lo, hi), exact)
    cutcheck.reads_everywhere(out, work)
    print("%s: cut without a selection, by ranks %s and by time%s" % (name, spec, "" if exact else " (times not compared)"))
if mpitest.failures:
    mpitest.fail("%d check(s) failed" % len(mpitest.failures))
mpitest.cleanup(mpitest.Run(0, "", "", work))
print("ok")
