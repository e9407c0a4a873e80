"""Three tools in one run, preloaded in every order and linked: each sees every call once."""
import itertools
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))
import mpitest  # noqa: E402
from countlib import read_counts  # noqa: E402

LAPS = 7
NP = 4
# samples/ring.c documents: every rank makes L MPI_Send, L MPI_Recv, one each of Init,
# Comm_rank, Comm_size, Finalize.
EXPECTED = {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Send": LAPS, "MPI_Recv": LAPS,
            "MPI_Finalize": 1, "nested": 0}
libs = {t: os.path.join(mpitest.BUILD, "lib", "libcount%s.so" % t) for t in "ABC"}


def check(run, how):
    for tool in "ABC":
        for rank in range(NP):
            got = read_counts(run.workdir, "count" + tool, rank)
            mpitest.expect_eq(got, EXPECTED, "%s: tool count%s on rank %d" % (how, tool, rank))
    mpitest.expect("ring: laps=%d ranks=%d token=%d" % (LAPS, NP, LAPS * NP) in run.stdout,
                   "%s: ring result changed: %s" % (how, run.stdout))


for order in itertools.permutations("ABC"):
    preload = ":".join(libs[t] for t in order)
    flag = ["-x", "LD_PRELOAD=" + preload] if mpitest.MPI == "openmpi" else ["-genv", "LD_PRELOAD", preload]
    r = mpitest.run(NP, flag + [mpitest.program("ring"), str(LAPS)])
    check(r, "preloaded " + "".join(order))
    mpitest.cleanup(r)

env = {"LD_LIBRARY_PATH": os.path.join(mpitest.BUILD, "lib")}
r = mpitest.run(NP, [mpitest.program("ring_linked"), str(LAPS)], env=env)
check(r, "linked C A B")
mpitest.cleanup(r)
print("tools combine: 6 preload orders and one link order, every call seen once by each tool")
