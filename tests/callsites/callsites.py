"""What the call-site samples (callsites.c, csite.c, callsites_f.f90) do, for the tests of every
tool: the line of each SITE:<name> mark, and the true calls and bytes of each site."""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))

# site -> (source file, MPI routine, calls on a rank that makes them, bytes per call)
C_SITES = {
    "send_small": ("callsites.c", "MPI_Send", 3, 40),
    "send_large": ("callsites.c", "MPI_Send", 5, 400),
    "recv_small": ("callsites.c", "MPI_Recv", 3, 40),
    "recv_large": ("callsites.c", "MPI_Recv", 5, 400),
    "lib_barrier": ("csite.c", "MPI_Barrier", 2, 0),
    "deep_allreduce": ("callsites.c", "MPI_Allreduce", 4, 4),
}
F_SITES = {
    "send_small_f": ("callsites_f.f90", "MPI_Send", 2, 40),
    "send_large_f": ("callsites_f.f90", "MPI_Send", 4, 200),
    "recv_small_f": ("callsites_f.f90", "MPI_Recv", 2, 40),
    "recv_large_f": ("callsites_f.f90", "MPI_Recv", 4, 200),
}


def line_of(mark, source=None):
    """The line number of 'SITE:<mark>' in the sample sources."""
    sources = [source] if source else ["callsites.c", "csite.c", "callsites_f.f90"]
    for name in sources:
        with open(os.path.join(HERE, name)) as f:
            for n, text in enumerate(f, 1):
                if re.search(r"SITE:%s\b" % re.escape(mark), text):
                    return name, n
    raise KeyError(mark)


def ranks_making(site, nprocs):
    """The ranks that make the calls of a site in an nprocs run."""
    if site.startswith("send"):
        return [r for r in range(nprocs) if r % 2 == 0 and r + 1 < nprocs]
    if site.startswith("recv"):
        return [r for r in range(nprocs) if r % 2 == 1]
    return list(range(nprocs))
