"""Two Python threads of one rank in MPI at once (mpi4py initializes MPI_THREAD_MULTIPLE), for the
Python call-site tests: on rank 0 a worker thread sends ROUNDS messages to rank 1 (SITE:tsend)
while the main thread receives ROUNDS replies (SITE:trecv), so one thread blocks in a receive
with the GIL released while the other runs Python and calls MPI. Rank 1 echoes each message
(SITE:echo_recv, SITE:echo_send)."""
import threading

from mpi4py import MPI

ROUNDS = 50
comm = MPI.COMM_WORLD
rank = comm.Get_rank()
if MPI.Query_thread() != MPI.THREAD_MULTIPLE:
    raise SystemExit("pythreads.py: MPI_THREAD_MULTIPLE is needed, got %d" % MPI.Query_thread())


def sender():
    for i in range(ROUNDS):
        comm.send(i, dest=1, tag=1)  # SITE:tsend


if rank == 0:
    worker = threading.Thread(target=sender)
    worker.start()
    total = sum(comm.recv(source=1, tag=2) for _ in range(ROUNDS))  # SITE:trecv
    worker.join()
    if total != sum(range(ROUNDS)):
        raise SystemExit("pythreads.py: replies summed to %d" % total)
elif rank == 1:
    for _ in range(ROUNDS):
        value = comm.recv(source=0, tag=1)  # SITE:echo_recv
        comm.send(value, dest=0, tag=2)  # SITE:echo_send
