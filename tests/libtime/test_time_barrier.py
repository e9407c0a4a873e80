"""A rank that sleeps before a barrier: the others' barrier time equals the sleep within 5%."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))
import mpitest  # noqa: E402
from timelib import profiles  # noqa: E402

NP, SLEEP_MS = 4, 2000
r = mpitest.run(NP, [mpitest.program("sleep_barrier"), str(SLEEP_MS)], tools=("time",))
profs = profiles(r.workdir, "sleep_barrier")
sleep_ns = SLEEP_MS * 1e6
for rank, p in profs.items():
    b = p["routines"]["MPI_Barrier"]
    mpitest.expect_eq(b["calls"], 1, "rank %d barrier calls" % rank)
    if rank == 1:
        mpitest.expect(b["incl_ns"] < 0.05 * sleep_ns, "the sleeper waited %d ns in the barrier" % b["incl_ns"])
    else:
        err = abs(b["incl_ns"] - sleep_ns) / sleep_ns
        mpitest.expect(err <= 0.05, "rank %d barrier time %d ns is %.1f%% off the %d ms sleep"
                       % (rank, b["incl_ns"], 100 * err, SLEEP_MS))
        print("rank %d: barrier %.4f s for a %.3f s sleep (%.2f%% off)" % (rank, b["incl_ns"] / 1e9, SLEEP_MS / 1e3, 100 * err))
mpitest.cleanup(r)
print("time barrier: waiting shows as barrier time within 5%")
