"""`mpe print` streams (issue 37): two passes that hold the message ends in flight, and an external
sort of the lines. Checked on real runs (liblog: halo2d, threads with two timelines a rank,
rma_epochs with one-sided transfers, isendrecv_ring), on synth logs and on the golden logs (whose
expected texts, the in-memory print's, golden_print_* checks; v6-skewed needs the causality repair):
- the lines are the same whether they fit in memory or are spilled to dozens of temporary runs
  merged in two levels (--sort-memory), and no temporary file is left behind;
- exact counts against `mpe stat --json` (its own streaming pass): a line per matched message, per
  state of each category, per collective, per one-sided operation;
- the filters (--rank, --kind, --from/--to) give the lines of the whole print that they select;
- with MPE_PRINT_REFERENCE set to an older `mpe` (the in-memory print), the output is the same;
- an unwritable TMPDIR gives one clear line and exit 1, not partial output presented as whole."""
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402
from mpitest import expect, expect_eq  # noqa: E402

work = tempfile.mkdtemp(prefix="mpe-print-")
OSC = {"OMPI_MCA_osc": "ucx"} if mpitest.MPI == "openmpi" else {}
logs = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "merge", "golden", "*.mpelog")))
for prog, np, args in (("halo2d", 4, []), ("threads", 3, []), ("rma_epochs", 4, []), ("isendrecv_ring", 3, [])):
    r = mpitest.run(np, [mpitest.program(prog)] + args, tools=("log",), env=OSC)
    logs.append(os.path.join(r.workdir, prog + ".mpelog"))
for ranks, events in ((16, 200000), (64, 400000)):
    path = os.path.join(work, "synth_%d.mpelog" % ranks)
    mpitest.mpe("synth", "--ranks", str(ranks), "--events", str(events), "--slow-ranks", "auto", path)
    logs.append(path)

reference = os.environ.get("MPE_PRINT_REFERENCE")
shifted = []


def printed(*args, env=None, check=True):
    p = subprocess.run([mpitest.MPE_COMMAND, "print"] + list(args), capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, **(env or {})))
    if check:
        expect(p.returncode == 0, "mpe print %s exited %d: %s" % (" ".join(args), p.returncode, p.stderr))
        return p.stdout
    return p


for log in logs:
    name = os.path.basename(log)
    whole = printed(log)
    lines = whole.splitlines()
    expect(len(lines) > 50, "%s: printed %d lines" % (name, len(lines)))
    tmp = os.path.join(work, "tmp-" + name)
    os.makedirs(tmp)
    spilled = printed("--sort-memory", "4096", log, env={"TMPDIR": tmp})
    expect(spilled == whole, "%s: the same lines through temporary runs" % name)
    expect_eq(os.listdir(tmp), [], "%s: temporary files left in TMPDIR" % name)
    if reference:
        old = subprocess.run([reference, "print", log], capture_output=True, text=True, timeout=300).stdout
        expect(old == whole, "%s: the same as %s print" % (name, reference))

    # Exact counts against mpe stat's own pass.
    st = json.loads(mpitest.mpe("stat", "--json", log).stdout)
    kinds = collections.Counter(line.split()[2] for line in lines)
    expect_eq(kinds["msg"], st["messages"]["matched"], "%s: message lines" % name)
    expect_eq(kinds["coll"], st["collectives"], "%s: collective lines" % name)
    states = collections.Counter(re.match(r"\S+ \S+ state (\S+)", x).group(1) for x in lines if " state " in x)
    for cat, total in st["states"].items():
        expect_eq(states[cat], total["count"], "%s: %s states" % (name, cat))
    expect_eq(kinds["rma"], st["rma"]["operations"], "%s: one-sided lines" % name)
    times = [int(x.split()[0]) for x in lines]
    expect(times == sorted(times), "%s: lines in time order" % name)
    if any(st["causality_shift_ns"]):
        shifted.append(name)

    # Filters select from the whole print.
    rank1 = [x for x in lines if x.split()[1].startswith("r1.") or "-> r1." in x or " -> r1 " in x]
    expect_eq(printed("--rank", "1", log).splitlines(), rank1, "%s: --rank 1" % name)
    expect_eq(printed("--kind", "msg", log).splitlines(), [x for x in lines if x.split()[2] == "msg"],
              "%s: --kind msg" % name)
    mid = times[len(times) // 2]
    expect_eq(printed("--from", str(mid), "--to", str(mid + 100000), log).splitlines(),
              [x for x in lines if mid <= int(x.split()[0]) <= mid + 100000], "%s: --from/--to" % name)
    print("%-26s %7d lines, %5d messages: the same spilled and in memory%s; counts and filters agree" %
          (name, len(lines), kinds["msg"], ", and as the reference" if reference else ""))

expect(shifted, "no log needed the causality repair")
# A temporary directory that cannot be made: one line, exit 1.
r = printed("--sort-memory", "4096", logs[0], check=False, env={"TMPDIR": "/proc/no-such-dir"})
errors = [x for x in r.stderr.splitlines() if x.startswith("mpe:")]
expect(r.returncode == 1, "unwritable TMPDIR: exit %d" % r.returncode)
expect_eq(len(errors), 1, "unwritable TMPDIR: lines on stderr: %r" % r.stderr)
expect("TMPDIR" in errors[0], "the line says what to do: " + errors[0])
print("unwritable TMPDIR: " + errors[0])
shutil.rmtree(work, ignore_errors=True)
print("PASS")
