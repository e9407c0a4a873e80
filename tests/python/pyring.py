"""A ring of pickled messages through mpi4py, for the Python call-site tests (test_python.py): each
rank sends ROUNDS messages to the next rank and receives ROUNDS from the previous one, at the
lines marked SITE:<name>; rank 0 sends first. The user state "step" is logged with mpelog around
each round (SITE:state), and the event "passed" after it (SITE:event). With the argument "deadlock", every rank receives first and the job hangs
in comm.recv at SITE:hang (for the live view's test)."""
import sys

from mpi4py import MPI

try:
    import mpelog
except ImportError:
    mpelog = None

ROUNDS = 5
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
right, left = (rank + 1) % size, (rank - 1) % size


def forward(value):
    if rank == 0:
        comm.send(value, dest=right, tag=7)  # SITE:send0
        return comm.recv(source=left, tag=7)  # SITE:recv0
    got = comm.recv(source=left, tag=7)  # SITE:recv
    comm.send(got + 1, dest=right, tag=7)  # SITE:send
    return got


if len(sys.argv) > 1 and sys.argv[1] == "deadlock":
    comm.recv(source=left, tag=9)  # SITE:hang
step = mpelog.State("step", "orange") if mpelog else None
passed = mpelog.Event("passed", "red") if mpelog else None
for i in range(ROUNDS):
    if step:
        step.begin()  # SITE:state
    forward(i)
    if step:
        step.end()
        passed.log(i)  # SITE:event
comm.Barrier()  # SITE:barrier
