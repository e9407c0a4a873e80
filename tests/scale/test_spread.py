"""`mpe stat` and `mpe waits` as MPI jobs (issue 37): `mpiexec -n M mpe stat|waits LOG` spreads the
log's ranks over M processes and must print exactly what one process prints, text and --json (waits
also with every instance), byte for byte, for M = 2 and 3 (Open MPI: 3): on the golden logs of every format version, a log liblog wrote for halo2d, a multi-threaded
run's, a one-sided run's, and a 256-rank `mpe synth` log of two million records; on two simulated
hosts (MPICH); and a damaged log fails once, with one line, on every process, instead of hanging.
The commands that do not spread (print, umq, diff, convert) run on process 0 only."""
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
work = tempfile.mkdtemp(prefix="mpe-spread-")
logs = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "merge", "golden", "*.mpelog")))
# Open MPI 4.1's default one-sided component crashes here without the tools (tests/rma/test_rma.py).
OSC = {"OMPI_MCA_osc": "ucx"} if mpitest.MPI == "openmpi" else {}
for prog, np in (("halo2d", 4), ("threads", 3), ("rma_epochs", 4)):
    r = mpitest.run(np, [mpitest.program(prog)], tools=("log",), env=OSC)
    logs.append(os.path.join(r.workdir, prog + ".mpelog"))
synth = os.path.join(work, "synth.mpelog")
mpitest.mpe("synth", "--ranks", "256", "--events", "2000000", synth)
logs.append(synth)

# How many processes each log is spread over. How the ranks are split is the same code on either
# MPI, proved at 2 and 3 on MPICH; Open MPI, whose runs take longer here (43 s against 27 s for
# the whole test), runs the uneven split (3) only.
SPREAD_OVER = (3,) if mpitest.MPI == "openmpi" else (2, 3)
# What each command prints, and the flags that change what it computes or prints.
RUNS = [("stat", []), ("stat", ["--json"]), ("waits", []), ("waits", ["--json"]), ("waits", ["--json", "--instances"])]
for log in logs:
    name = os.path.basename(log)
    for command, flags in RUNS:
        alone = mpitest.mpe(command, *flags, log).stdout
        expect(len(alone) > 200, "mpe %s %s printed little:\n%s" % (command, name, alone))
        for m in SPREAD_OVER:
            spread = mpitest.run(m, [MPE, command] + flags + [log], timeout=300)
            expect_eq(spread.stdout, alone, "mpiexec -n %d mpe %s %s %s" % (m, command, " ".join(flags), name))
        print("%-24s %-5s %-19s the same alone and over 2 and 3 processes" % (name, command, " ".join(flags)))

# The commands that do not spread run on process 0 alone under mpiexec: one output, and a file
# written once, not by every process at the same time.
for command in (["print"], ["umq"], ["diff", synth]):
    alone = mpitest.mpe(*(command + [synth])).stdout
    r = mpitest.run(3, [MPE] + command + [synth], timeout=300)
    expect_eq(r.stdout, alone, "mpiexec -n 3 mpe %s" % command[0])
for out, m in (("alone.json", 1), ("spread.json", 3)):
    path = os.path.join(work, out)
    if m == 1:
        mpitest.mpe("convert", "--to", "chrome", synth, path)
    else:
        mpitest.run(m, [MPE, "convert", "--to", "chrome", synth, path], timeout=300)
with open(os.path.join(work, "alone.json"), "rb") as a, open(os.path.join(work, "spread.json"), "rb") as b:
    expect(a.read() == b.read(), "mpiexec -n 3 mpe convert wrote another file than one process")
print("print, umq, diff, convert under mpiexec -n 3: process 0's output, the same as alone")

if twohost.unavailable() is None:
    for command in ("stat", "waits"):
        alone = mpitest.mpe(command, synth).stdout
        r = twohost.run(2, [MPE, command, synth], timeout=300)
        expect_eq(r.stdout, alone, "mpe %s over two simulated hosts" % command)
        print("synth.mpelog            %-5s the same over two simulated hosts" % command)
else:
    print("two hosts not simulated: " + twohost.unavailable())

# A damaged chunk in the middle of the file: every process stops, one line says why.
damaged = os.path.join(work, "damaged.mpelog")
shutil.copy(synth, damaged)
with open(damaged, "r+b") as f:
    size = os.path.getsize(damaged)
    f.seek(size // 2)
    f.write(b"\xff" * 4096)
for command in ("stat", "waits"):
    alone = mpitest.mpe(command, damaged, check=False)
    expect(alone.returncode != 0, "mpe %s on a damaged log exited 0" % command)
    r = mpitest.run(3, [MPE, command, damaged], check=False, timeout=300)
    lines = [x for x in r.stderr.splitlines() if x.startswith("mpe:")]
    expect(r.rc != 0, "mpiexec -n 3 mpe %s on a damaged log exited 0" % command)
    expect_eq(len(lines), 1, "lines from 3 processes of mpe %s on a damaged log:\n%s" % (command, r.stderr))
    expect("corrupt" in lines[0] or "truncated" in lines[0], "the line names the damage: " + lines[0])
    print("damaged log, mpe %-5s over 3 processes: %s" % (command, lines[0]))
shutil.rmtree(work, ignore_errors=True)
print("PASS")
