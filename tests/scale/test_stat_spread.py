"""`mpe stat` as an MPI job (issue 37): `mpiexec -n M mpe stat LOG` spreads the log's ranks over M
processes and must print exactly what one process prints, text and --json, byte for byte, for M = 2
and 3: on the golden logs of every format version, a log liblog wrote for halo2d, a multi-threaded
run's, a one-sided run's, and a 256-rank `mpe synth` log of two million records; on two simulated
hosts (MPICH); and a damaged log fails once, with one line, on every process, instead of hanging."""
import glob
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402
import twohost  # noqa: E402
from mpitest import expect, expect_eq  # noqa: E402

MPE = mpitest.MPE_COMMAND
work = tempfile.mkdtemp(prefix="mpe-stat-spread-")
logs = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "merge", "golden", "*.mpelog")))
# Open MPI 4.1's default one-sided component crashes here without the tools (tests/rma/test_rma.py).
OSC = {"OMPI_MCA_osc": "ucx"} if mpitest.MPI == "openmpi" else {}
for prog, np in (("halo2d", 4), ("threads", 3), ("rma_epochs", 4)):
    r = mpitest.run(np, [mpitest.program(prog)], tools=("log",), env=OSC)
    logs.append(os.path.join(r.workdir, prog + ".mpelog"))
synth = os.path.join(work, "synth.mpelog")
mpitest.mpe("synth", "--ranks", "256", "--events", "2000000", synth)
logs.append(synth)

for log in logs:
    name = os.path.basename(log)
    for flags in ([], ["--json"]):
        alone = mpitest.mpe("stat", *flags, log).stdout
        expect(len(alone) > 200, "mpe stat %s printed little:\n%s" % (name, alone))
        for m in (2, 3):
            spread = mpitest.run(m, [MPE, "stat"] + flags + [log], timeout=300)
            expect_eq(spread.stdout, alone, "mpiexec -n %d mpe stat %s %s" % (m, " ".join(flags), name))
        print("%-24s %-7s the same alone and over 2 and 3 processes" % (name, " ".join(flags)))

if twohost.unavailable() is None:
    alone = mpitest.mpe("stat", synth).stdout
    r = twohost.run(2, [MPE, "stat", synth], timeout=300)
    expect_eq(r.stdout, alone, "mpe stat over two simulated hosts")
    print("synth.mpelog            the same over two simulated hosts")
else:
    print("two hosts not simulated: " + twohost.unavailable())

# A damaged chunk in the middle of the file: every process stops, one line says why.
damaged = os.path.join(work, "damaged.mpelog")
shutil.copy(synth, damaged)
with open(damaged, "r+b") as f:
    size = os.path.getsize(damaged)
    f.seek(size // 2)
    f.write(b"\xff" * 4096)
alone = mpitest.mpe("stat", damaged, check=False)
expect(alone.returncode != 0, "mpe stat on a damaged log exited 0")
r = mpitest.run(3, [MPE, "stat", damaged], check=False, timeout=300)
lines = [x for x in r.stderr.splitlines() if x.startswith("mpe:")]
expect(r.rc != 0, "mpiexec -n 3 mpe stat on a damaged log exited 0")
expect_eq(len(lines), 1, "lines from 3 processes on a damaged log:\n" + r.stderr)
expect("corrupt" in lines[0] or "truncated" in lines[0], "the line names the damage: " + lines[0])
print("damaged log over 3 processes: " + lines[0])
shutil.rmtree(work, ignore_errors=True)
print("PASS")
