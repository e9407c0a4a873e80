"""Sample: halo2d.c in Python (mpi4py and numpy): a 2-D Jacobi stencil with nonblocking halo exchange.

Usage: mpiexec -n P python3 halo2d.py [iterations]   (iterations defaults to 20)

The same decomposition, boundary and residual as halo2d.c: each rank owns a 64x64 block of a grid
laid out by MPI_Dims_create, not periodic, 1.0 along the global top edge. Both kinds of mpi4py
calls are used:
  - the halos go through numpy buffers (uppercase Irecv/Isend/Waitall, a vector datatype for the
    columns), exactly as in halo2d.c: 4*I Irecv and 4*I Isend per rank, edges to MPI_PROC_NULL;
  - each iteration a pickled note (lowercase sendrecv) goes to the right neighbour, and the
    residual is reduced with the lowercase allreduce, then checked with the uppercase Allreduce.
Rank 0 recomputes the whole grid serially and requires a bit-identical residual; it prints
"halo2d.py: P ranks, I iterations, residual R" and exits 1 on a mismatch.

Under `mpe run --log` the sweep is a user state ("sweep"), logged with mpelog (MPE's logging API).
"""

import sys

import numpy as np
from mpi4py import MPI

try:
    import mpelog  # on PYTHONPATH under `mpe run --log`
except ImportError:
    mpelog = None

LOCAL_N = 64
TO_UP, TO_DOWN, TO_LEFT, TO_RIGHT = range(4)  # tags name the direction of travel


def initial_grid(rows, cols, origin_row, origin_col, top_is_global_edge):
    """The block with one ghost cell around it, as halo2d.c's fill_grid."""
    u = np.zeros((rows + 2, cols + 2))
    r = np.arange(origin_row, origin_row + rows)[:, None]
    c = np.arange(origin_col, origin_col + cols)[None, :]
    u[1:-1, 1:-1] = ((r * 7 + c * 13) % 17) / 16.0
    if top_is_global_edge:
        u[0, 1:-1] = 1.0
    return u


def sweep(u, nxt):
    """One Jacobi sweep into nxt; the largest change. Sums in halo2d.c's order, so bit-identical."""
    value = 0.25 * (((u[:-2, 1:-1] + u[2:, 1:-1]) + u[1:-1, :-2]) + u[1:-1, 2:])
    nxt[1:-1, 1:-1] = value
    return float(np.max(np.abs(value - u[1:-1, 1:-1])))


def serial_residual(rows, cols, iterations):
    u = initial_grid(rows, cols, 0, 0, True)
    nxt = u.copy()
    residual = 0.0
    for _ in range(iterations):
        residual = sweep(u, nxt)
        u, nxt = nxt, u
    return residual


def main():
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    dims = MPI.Compute_dims(size, 2)
    cart = world.Create_cart(dims, periods=[False, False], reorder=False)
    coords = cart.Get_coords(rank)
    up, down = cart.Shift(0, 1)
    left, right = cart.Shift(1, 1)

    stride = LOCAL_N + 2
    origin = (coords[0] * LOCAL_N, coords[1] * LOCAL_N)
    u = initial_grid(LOCAL_N, LOCAL_N, *origin, up == MPI.PROC_NULL)
    nxt = initial_grid(LOCAL_N, LOCAL_N, *origin, up == MPI.PROC_NULL)
    column = MPI.DOUBLE.Create_vector(LOCAL_N, 1, stride).Commit()
    sweeping = mpelog.State("sweep", "SeaGreen") if mpelog else None

    def at(grid, i, j):
        """The grid from cell (i, j) on, flat: where a row or a column of the halo starts."""
        return grid.reshape(-1)[i * stride + j:]

    local_residual = 0.0
    for it in range(iterations):
        requests = [
            cart.Irecv([at(u, 0, 1), LOCAL_N, MPI.DOUBLE], up, TO_DOWN),
            cart.Irecv([at(u, LOCAL_N + 1, 1), LOCAL_N, MPI.DOUBLE], down, TO_UP),
            cart.Irecv([at(u, 1, 0), 1, column], left, TO_RIGHT),
            cart.Irecv([at(u, 1, LOCAL_N + 1), 1, column], right, TO_LEFT),
            cart.Isend([at(u, 1, 1), LOCAL_N, MPI.DOUBLE], up, TO_UP),
            cart.Isend([at(u, LOCAL_N, 1), LOCAL_N, MPI.DOUBLE], down, TO_DOWN),
            cart.Isend([at(u, 1, 1), 1, column], left, TO_LEFT),
            cart.Isend([at(u, 1, LOCAL_N), 1, column], right, TO_RIGHT),
        ]
        MPI.Request.Waitall(requests)
        note = cart.sendrecv({"iteration": it, "from": rank}, dest=right, source=left)
        if note is not None and note["iteration"] != it:
            raise SystemExit(f"halo2d.py: rank {rank} got iteration {note['iteration']}'s note in {it}")
        if sweeping:
            sweeping.begin()
        local_residual = sweep(u, nxt)
        if sweeping:
            sweeping.end()
        u, nxt = nxt, u

    residual = cart.allreduce(local_residual, op=MPI.MAX)
    largest = np.zeros(1)
    cart.Allreduce(np.array([local_residual]), largest, op=MPI.MAX)
    ok = residual == largest[0]
    if rank == 0:
        expected = serial_residual(dims[0] * LOCAL_N, dims[1] * LOCAL_N, iterations)
        ok = ok and residual == expected
        print(f"halo2d.py: {size} ranks, {iterations} iterations, residual {residual!r}"
              + ("" if ok else f" (serial {expected!r}: MISMATCH)"))
    column.Free()
    cart.Free()
    return 0 if world.bcast(ok, root=0) else 1


if __name__ == "__main__":
    sys.exit(main())
