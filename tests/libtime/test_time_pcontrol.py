"""MPI_Pcontrol: 0 pauses and 1 resumes (samples/pcontrol.c); 2 resets (by a test program)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))
import mpitest  # noqa: E402
from timelib import calls, profiles  # noqa: E402

NP = 4
# samples/pcontrol.c: the tool starts recording, Pcontrol(1) keeps it on, Pcontrol(0) stops it.
# Recorded: 2 Allreduce, 1 Barrier, 1 Sendrecv before; 10 Allreduce, 5 Barrier inside; both Pcontrol
# calls; nothing after Pcontrol(0) except MPI_Finalize.
r = mpitest.run(NP, [mpitest.program("pcontrol")], tools=("time",))
profs = profiles(r.workdir, "pcontrol")
mpitest.expect_eq(sorted(profs), list(range(NP)), "ranks")
for rank, p in profs.items():
    mpitest.expect_eq(calls(p), {"MPI_Init": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Allreduce": 12,
                                 "MPI_Barrier": 6, "MPI_Sendrecv": 1, "MPI_Pcontrol": 2, "MPI_Finalize": 1},
                      "pcontrol rank %d calls" % rank)
    rt = p["routines"]
    mpitest.expect_eq((rt["MPI_Sendrecv"]["bytes_sent"], rt["MPI_Sendrecv"]["bytes_recv"]), (4, 4), "sendrecv bytes")
    mpitest.expect_eq((rt["MPI_Allreduce"]["bytes_sent"], rt["MPI_Allreduce"]["bytes_recv"]), (48, 48), "allreduce bytes")
mpitest.cleanup(r)
print("time pcontrol: the Pcontrol(0) region is excluded")

# Pcontrol(2) resets: sleep_barrier with "reset" calls it after its MPI_Allreduce, so the
# profile holds only what follows (Pcontrol itself, the barrier, Finalize).
r = mpitest.run(NP, [mpitest.program("sleep_barrier"), "10", "reset"], tools=("time",))
for rank, p in profiles(r.workdir, "sleep_barrier").items():
    mpitest.expect_eq(calls(p), {"MPI_Pcontrol": 1, "MPI_Barrier": 1, "MPI_Finalize": 1}, "reset rank %d calls" % rank)
mpitest.cleanup(r)
print("time pcontrol: Pcontrol(2) resets the counters")
