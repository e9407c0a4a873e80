"""The Fortran sample's calls are seen, once each, with the C routine's identity."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))
import mpitest  # noqa: E402
from countlib import read_counts  # noqa: E402

NP = 4
lib = os.path.join(mpitest.BUILD, "lib", "libcountA.so")
flag = ["-x", "LD_PRELOAD=" + lib] if mpitest.MPI == "openmpi" else ["-genv", "LD_PRELOAD", lib]
plain = mpitest.run(NP, [mpitest.program("fortran_ring")])
r = mpitest.run(NP, flag + [mpitest.program("fortran_ring")])
mpitest.expect_eq(r.stdout, plain.stdout, "fortran_ring output under the tool")
for rank in range(NP):
    got = read_counts(r.workdir, "countA", rank)
    for name, n in {"MPI_Init": 1, "MPI_Send": 10, "MPI_Recv": 10, "MPI_Allreduce": 1, "MPI_Barrier": 1,
                    "MPI_Finalize": 1}.items():
        mpitest.expect_eq(got.get(name), n, "rank %d %s count" % (rank, name))
    mpitest.expect_eq(got.get("nested"), 0, "rank %d nested calls (MPICH's binding calling MPI_X)" % rank)
print("fortran: every call of fortran_ring seen once on each of %d ranks" % NP)
