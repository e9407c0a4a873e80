"""A ring through MPI's C functions called from Python with ctypes (no mpi4py), for the Python
call-site tests on an MPI that has no mpi4py (Debian's is built for Open MPI only): each rank
sends ROUNDS messages of 8 bytes to the next rank and receives ROUNDS from the previous one, at
the lines marked SITE:<name>. The handles come from the MPI named by MPE_MPI (mpich or openmpi)."""
import ctypes
import os
import sys

ROUNDS = 4
if os.environ.get("MPE_MPI", "mpich") == "openmpi":
    ctypes.CDLL("libmpi.so.40", mode=ctypes.RTLD_GLOBAL)
    mpi = ctypes.CDLL(None)  # the process's symbols: a preloaded tool's MPI_Send before the MPI's
    COMM_WORLD = ctypes.addressof(ctypes.c_char.in_dll(mpi, "ompi_mpi_comm_world"))
    BYTE = ctypes.addressof(ctypes.c_char.in_dll(mpi, "ompi_mpi_byte"))
    handle = ctypes.c_void_p
else:
    ctypes.CDLL("libmpich.so.12", mode=ctypes.RTLD_GLOBAL)
    mpi = ctypes.CDLL(None)
    COMM_WORLD, BYTE = 0x44000000, 0x4C00010D
    handle = ctypes.c_int
mpi.MPI_Send.argtypes = [ctypes.c_void_p, ctypes.c_int, handle, ctypes.c_int, ctypes.c_int, handle]
mpi.MPI_Recv.argtypes = [ctypes.c_void_p, ctypes.c_int, handle, ctypes.c_int, ctypes.c_int, handle, ctypes.c_void_p]
mpi.MPI_Comm_rank.argtypes = mpi.MPI_Comm_size.argtypes = [handle, ctypes.POINTER(ctypes.c_int)]
mpi.MPI_Barrier.argtypes = [handle]

mpi.MPI_Init(None, None)  # SITE:init
rank, size = ctypes.c_int(), ctypes.c_int()
mpi.MPI_Comm_rank(COMM_WORLD, ctypes.byref(rank))
mpi.MPI_Comm_size(COMM_WORLD, ctypes.byref(size))
rank, size = rank.value, size.value
buf = ctypes.create_string_buffer(8)
status = ctypes.create_string_buffer(64)  # room for either MPI's MPI_Status


def forward():
    if rank == 0:
        mpi.MPI_Send(buf, 8, BYTE, (rank + 1) % size, 7, COMM_WORLD)  # SITE:send0
        mpi.MPI_Recv(buf, 8, BYTE, (rank - 1) % size, 7, COMM_WORLD, status)  # SITE:recv0
    else:
        mpi.MPI_Recv(buf, 8, BYTE, (rank - 1) % size, 7, COMM_WORLD, status)  # SITE:recv
        mpi.MPI_Send(buf, 8, BYTE, (rank + 1) % size, 7, COMM_WORLD)  # SITE:send


for _ in range(ROUNDS):
    forward()
mpi.MPI_Barrier(COMM_WORLD)  # SITE:barrier
mpi.MPI_Finalize()
sys.exit(0)
