"""Scale: halo2d on 64 ranks (SCALE_RANKS), oversubscribed on the machine's cores, under the three
tools at once (liblog, libmpetime, libumq preloaded together). The merged log holds every rank,
every message matched and none received before it was sent, the exact calls per rank; the time
report covers every rank with the exact call counts; libumq reports once for the whole run."""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import mpitest  # noqa: E402

MPE = os.path.join(mpitest.BUILD, "bin", "mpe")
NP = int(os.environ.get("SCALE_RANKS", "64"))
ITERS = 3
NO_VAR_LINE = "umq: looked for the MPI_T performance variable"


def dims_create(n):
    """MPI_Dims_create(n, 2): the two most balanced factors, larger first."""
    a = max(d for d in range(1, int(n ** 0.5) + 1) if n % d == 0)
    return n // a, a


def mpe(*args):
    p = subprocess.run([MPE] + list(args), capture_output=True, text=True, timeout=300)
    mpitest.expect(p.returncode == 0, "mpe %s exited %d:\n%s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


start = time.monotonic()
r = mpitest.run(NP, [mpitest.program("halo2d"), str(ITERS)], tools=("log", "time", "umq"), timeout=900,
                env={"MPE_LOGFILE_PREFIX": "halo2d"})
wall = time.monotonic() - start
mpitest.expect("ranks=%d" % NP in r.stdout, "halo2d did not finish on %d ranks:\n%s" % (NP, r.stdout))

# The merged log: every rank, exact calls, every message matched, none backward, no part file left.
log = os.path.join(r.workdir, "halo2d.mpelog")
mpitest.expect(os.path.exists(log), "no merged log; files %r\nstderr:\n%s" % (os.listdir(r.workdir), r.stderr[-3000:]))
mpitest.expect_eq([f for f in os.listdir(r.workdir) if f.endswith(".part")], [], "per-rank files left after the merge")
st = json.loads(mpe("stat", "--json", log))
mpitest.expect_eq(st["ranks"], NP, "log: ranks")
# Definitions linear in the ranks (format 5): MPI_COMM_WORLD's members, and those of halo2d's
# Cartesian communicator (the world's order, so the same group), are stored no time at all, not
# once per rank; only groups other than the world's and the ranks' own would be.
defs = mpe("print", "--definitions", log)
stored = int(re.search(r"groups stored: [0-9]+ with ([0-9]+) members", defs).group(1))
mpitest.expect_eq(stored, 0, "members stored in the definitions of %d ranks (%s)" % (NP, defs.strip()))
for rank in range(NP):
    c = st["states_per_rank"].get(str(rank), {})
    for fn, n in (("MPI_Isend", 4 * ITERS), ("MPI_Irecv", 4 * ITERS), ("MPI_Waitall", ITERS), ("MPI_Allreduce", 1),
                  ("MPI_Cart_create", 1), ("MPI_Finalize", 1)):
        mpitest.expect_eq(c.get(fn, 0), n, "log rank %d: %s" % (rank, fn))
rows, cols = dims_create(NP)
# Not periodic: each interior edge of the rows x cols grid carries one message each way per sweep.
want = 2 * (rows * (cols - 1) + cols * (rows - 1)) * ITERS
m = st["messages"]
mpitest.expect_eq((m["matched"], m["unmatched_sends"], m["unmatched_recvs"], m["backward"]), (want, 0, 0, 0),
                  "log: messages (matched, unmatched sends, unmatched receives, received before sent)")

# libmpetime's report: every rank, the exact calls summed over the ranks.
with open(os.path.join(r.workdir, "halo2d.mpetime.json")) as f:
    report = json.load(f)
mpitest.expect_eq(report["ranks"], NP, "time report: ranks")
calls = {x["name"]: x["calls"] for x in report["routines"]}
for fn, n in (("MPI_Isend", 4 * ITERS), ("MPI_Irecv", 4 * ITERS), ("MPI_Waitall", ITERS), ("MPI_Allreduce", 1)):
    mpitest.expect_eq(calls.get(fn), n * NP, "time report: %s calls over %d ranks" % (fn, NP))
with open(os.path.join(r.workdir, "halo2d.mpetime.txt")) as f:
    text = f.read()
mpitest.expect("MPI_Waitall" in text and "MPI time per rank" in text, "time report text lacks its sections")

# libumq: a report over every rank where the MPI has a queue variable (Open MPI), else one line
# for the run, not one per rank.
umq = r.files(".umq.json")
if umq:
    with open(umq[0]) as f:
        mpitest.expect_eq(json.load(f)["ranks"], NP, "umq report: ranks")
else:
    mpitest.expect_eq(r.stderr.count(NO_VAR_LINE), 1, "umq: lines saying there is no queue variable\n" + r.stderr[-2000:])

print("scale: %d ranks (%dx%d halo2d, %d sweeps) under liblog + libmpetime + libumq in %.1f s: %d messages matched, "
      "none backward; log %d bytes; time report over %d ranks; umq %s" %
      (NP, rows, cols, ITERS, wall, want, os.path.getsize(log), NP, "report over %d ranks" % NP if umq else "no variable"))
mpitest.cleanup(r)
