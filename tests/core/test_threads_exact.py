"""Under MPI_THREAD_MULTIPLE, three tools each see every call from every thread exactly once."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))
import mpitest  # noqa: E402
from countlib import read_counts  # noqa: E402

NP, M = 4, 200
libs = ":".join(os.path.join(mpitest.BUILD, "lib", "libcount%s.so" % t) for t in "ABC")
flag = ["-x", "LD_PRELOAD=" + libs] if mpitest.MPI == "openmpi" else ["-genv", "LD_PRELOAD", libs]
r = mpitest.run(NP, flag + [mpitest.program("threads"), str(M)], timeout=300)
# samples/threads.c documents: per rank 4 Isend, 4 Wait, 4*M Sendrecv, 1 Reduce, >= 4*M Iprobe.
for rank in range(NP):
    counts = [read_counts(r.workdir, "count" + t, rank) for t in "ABC"]
    for t, c in zip("ABC", counts):
        for name, n in {"MPI_Init_thread": 1, "MPI_Isend": 4, "MPI_Wait": 4, "MPI_Sendrecv": 4 * M,
                        "MPI_Reduce": 1, "MPI_Finalize": 1}.items():
            mpitest.expect_eq(c.get(name), n, "tool %s rank %d %s" % (t, rank, name))
        mpitest.expect(c.get("MPI_Iprobe", 0) >= 4 * M, "tool %s rank %d Iprobe count" % (t, rank))
    mpitest.expect(counts[0] == counts[1] == counts[2], "rank %d: the three tools disagree: %s" % (rank, counts))
print("threads: %d ranks x 4 threads, every call seen exactly once by each of 3 tools" % NP)
