"""Exact totals under MPI_THREAD_MULTIPLE: samples/threads.c's 4 threads per rank, summed at finalize."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))
import mpitest  # noqa: E402
from timelib import profiles  # noqa: E402

NP, M, T = 4, 50, 4
r = mpitest.run(NP, [mpitest.program("threads"), str(M)], tools=("time",))
profs = profiles(r.workdir, "threads")
mpitest.expect_eq(sorted(profs), list(range(NP)), "ranks")
for rank, p in profs.items():
    rt = p["routines"]
    mpitest.expect_eq(p["header"]["threads"], T + 1, "rank %d threads that called MPI" % rank)
    sr = rt["MPI_Sendrecv"]
    # Each thread: M exchanges receiving one uint64 each, sending one in all but the last.
    mpitest.expect_eq((sr["calls"], sr["bytes_sent"], sr["bytes_recv"]), (T * M, T * (M - 1) * 8, T * M * 8),
                      "rank %d MPI_Sendrecv calls/sent/received" % rank)
    # The first message of each thread goes out with MPI_Send or MPI_Isend (+ MPI_Wait).
    first = sum(rt.get(n, {"calls": 0})["calls"] for n in ("MPI_Send", "MPI_Isend"))
    first_bytes = sum(rt.get(n, {"bytes_sent": 0})["bytes_sent"] for n in ("MPI_Send", "MPI_Isend"))
    mpitest.expect_eq((first, first_bytes), (T, T * 8), "rank %d first sends" % rank)
    mpitest.expect(rt["MPI_Iprobe"]["calls"] >= T * M, "rank %d: fewer than %d MPI_Iprobe" % (rank, T * M))
    mpitest.expect_eq(rt["MPI_Reduce"]["calls"], 1, "rank %d MPI_Reduce" % rank)
    mpitest.expect_eq(rt["MPI_Init_thread"]["calls"], 1, "rank %d MPI_Init_thread" % rank)
    mpitest.expect(p["header"]["mpi_ns"] <= (T + 1) * p["header"]["run_ns"], "rank %d MPI time above threads x run" % rank)
mpitest.expect("libmpetime: report in" in r.stderr, "no report line")
mpitest.cleanup(r)
print("time threads: totals exact with %d threads per rank" % T)
