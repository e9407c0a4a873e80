"""The conformance matrix's Fortran templates (mpif.h, use mpi and use mpi_f08 share them): one per
class (and mode, or shape), the programs' head, tail and declarations.

Read by gen_matrix.py, whose docstring says what `call @MPI_X(`, `$F`, `call msg(n)` mean in them."""

# ---------------------------------------------------------------------------------------------
# Fortran templates, one set for mpif.h, use mpi and use mpi_f08 (only declarations differ, and
# $SOURCE(st), the status's source field). Buffers are integer arrays of 16; ierr is passed always.
# ---------------------------------------------------------------------------------------------
F_POST4 = """call @MPI_Irecv(rbuf, 4, MPI_INTEGER, partner, 20, W, reqs(1), ierr)
call @MPI_Irecv(rbuf2, 4, MPI_INTEGER, partner, 21, W, reqs(2), ierr)
call @MPI_Isend(sbuf, 4, MPI_INTEGER, partner, 20, W, reqs(3), ierr)
call @MPI_Isend(sbuf2, 4, MPI_INTEGER, partner, 21, W, reqs(4), ierr)
call msg(2)
"""
F_DONE4 = "call add(rbuf, 4)\ncall add(rbuf2, 4)\n"

F_T = {
    ("send", "b"): """if (.not. sender) call @MPI_Irecv(rbuf, 4, MPI_INTEGER, partner, 1, W, req, ierr)
call @MPI_Barrier(W, ierr)
if (sender) then
  call @$F(sbuf, 4, MPI_INTEGER, partner, 1, W, ierr)
  call msg(1)
else
  call @MPI_Wait(req, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("send", "nb"): """if (.not. sender) call @MPI_Irecv(rbuf, 4, MPI_INTEGER, partner, 2, W, req, ierr)
call @MPI_Barrier(W, ierr)
if (sender) then
  call @$F(sbuf, 4, MPI_INTEGER, partner, 2, W, req, ierr)
  call msg(1)
end if
call @MPI_Wait(req, st, ierr)
if (.not. sender) call add(rbuf, 4)
""",
    ("send", "pi"): """if (sender) call @$F(sbuf, 4, MPI_INTEGER, partner, 3, W, preq, ierr)
do k = 1, 2
  if (.not. sender) call @MPI_Irecv(rbuf, 4, MPI_INTEGER, partner, 3, W, req, ierr)
  call @MPI_Barrier(W, ierr)
  if (sender) then
    if (k == 1) call @MPI_Start(preq, ierr)
    if (k == 2) call @MPI_Startall(1, preqs, ierr)
    call msg(1)
    if (k == 1) call @MPI_Wait(preq, st, ierr)
    if (k == 2) call @MPI_Waitall(1, preqs, sts, ierr)
  else
    call @MPI_Wait(req, st, ierr)
    call add(rbuf, 4)
  end if
end do
if (sender) call @MPI_Request_free(preq, ierr)
""",
    ("recv", "b"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 4, W, ierr)
  call msg(1)
else
  call @$F(rbuf, 4, MPI_INTEGER, partner, 4, W, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("recv", "nb"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 5, W, ierr)
  call msg(1)
else
  call @$F(rbuf, 4, MPI_INTEGER, partner, 5, W, req, ierr)
  call @MPI_Wait(req, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("recv", "pi"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 6, W, ierr)
  call @MPI_Send(sbuf2, 4, MPI_INTEGER, partner, 6, W, ierr)
  call msg(2)
else
  call @$F(rbuf, 4, MPI_INTEGER, partner, 6, W, preq, ierr)
  call @MPI_Start(preq, ierr)
  call @MPI_Wait(preq, st, ierr)
  call add(rbuf, 4)
  call @MPI_Startall(1, preqs, ierr)
  call @MPI_Waitall(1, preqs, sts, ierr)
  call add(rbuf, 4)
  call @MPI_Request_free(preq, ierr)
end if
""",
    ("sendrecv", "b", ""): """call @$F(sbuf, 4, MPI_INTEGER, partner, 7, rbuf, 4, MPI_INTEGER, partner, 7, W, st, ierr)
call msg(1)
call add(rbuf, 4)
""",
    ("sendrecv", "nb", ""): """call @$F(sbuf, 4, MPI_INTEGER, partner, 7, rbuf, 4, MPI_INTEGER, partner, 7, W, req, ierr)
call @MPI_Wait(req, st, ierr)
call msg(1)
call add(rbuf, 4)
""",
    ("sendrecv", "b", "replace"): """call @$F(sbuf, 4, MPI_INTEGER, partner, 8, partner, 8, W, st, ierr)
call msg(1)
call add(sbuf, 4)
""",
    ("sendrecv", "nb", "replace"): """call @$F(sbuf, 4, MPI_INTEGER, partner, 8, partner, 8, W, req, ierr)
call @MPI_Wait(req, st, ierr)
call msg(1)
call add(sbuf, 4)
""",
    ("probe", "b"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 9, W, ierr)
  call msg(1)
else
  call @$F(partner, 9, W, st, ierr)
  call @MPI_Get_count(st, MPI_INTEGER, n, ierr)
  call @MPI_Recv(rbuf, n, MPI_INTEGER, $SOURCE(st), 9, W, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("probe", "nb"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 10, W, ierr)
  call msg(1)
else
  flag = .false.
  do while (.not. flag)
    call @$F(partner, 10, W, flag, st, ierr)
  end do
  call @MPI_Recv(rbuf, 4, MPI_INTEGER, partner, 10, W, MPI_STATUS_IGNORE, ierr)
  call add(rbuf, 4)
end if
""",
    ("mprobe", "b"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 11, W, ierr)
  call msg(1)
else
  call @$F(partner, 11, W, msgh, st, ierr)
  call @MPI_Mrecv(rbuf, 4, MPI_INTEGER, msgh, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("mprobe", "nb"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 12, W, ierr)
  call msg(1)
else
  flag = .false.
  do while (.not. flag)
    call @$F(partner, 12, W, flag, msgh, st, ierr)
  end do
  call @MPI_Mrecv(rbuf, 4, MPI_INTEGER, msgh, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("mrecv", "b"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 13, W, ierr)
  call msg(1)
else
  call @MPI_Mprobe(partner, 13, W, msgh, st, ierr)
  call @$F(rbuf, 4, MPI_INTEGER, msgh, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("mrecv", "nb"): """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, 14, W, ierr)
  call msg(1)
else
  call @MPI_Mprobe(partner, 14, W, msgh, st, ierr)
  call @$F(rbuf, 4, MPI_INTEGER, msgh, req, ierr)
  call @MPI_Wait(req, st, ierr)
  call add(rbuf, 4)
end if
""",
    ("wait", "b"): F_POST4 + """do k = 1, 4
  if (mod(k, 2) == 1) call @$F(reqs(k), st, ierr)
  if (mod(k, 2) == 0) call @$F(reqs(k), MPI_STATUS_IGNORE, ierr)
end do
""" + F_DONE4,
    ("waitall", "b"): F_POST4 + "call @$F(4, reqs, sts, ierr)\n" + F_DONE4 + F_POST4 +
    "call @$F(4, reqs, MPI_STATUSES_IGNORE, ierr)\n" + F_DONE4,
    ("waitany", "b"): F_POST4 + """do k = 1, 5
  call @$F(4, reqs, idx, st, ierr)
  ! MPICH 4.0.2's own bindings: mpif.h returns MPI_UNDEFINED + 1 when no request is active, and
  ! mpi_f08 returns 0-based indices; so only "a request completed" and "none was active" are checked
  if (k == 5 .and. idx /= MPI_UNDEFINED .and. idx /= MPI_UNDEFINED + 1) errs = errs + 1
  if (k < 5 .and. (idx < 0 .or. idx > 4)) errs = errs + 1
end do
""" + F_DONE4,
    ("waitsome", "b"): F_POST4 + """done = 0
do while (done < 4)
  call @$F(4, reqs, outc, idxs, sts, ierr)
  if (outc == MPI_UNDEFINED) then
    errs = errs + 1
    exit
  end if
  done = done + outc
end do
""" + F_DONE4,
    ("test", "b"): F_POST4 + """do k = 1, 4
  flag = .false.
  do while (.not. flag)
    call @$F(reqs(k), flag, st, ierr)
  end do
end do
""" + F_DONE4,
    ("testall", "b"): F_POST4 + """flag = .false.
do while (.not. flag)
  call @$F(4, reqs, flag, sts, ierr)
end do
""" + F_DONE4,
    ("testany", "b"): F_POST4 + """done = 0
do while (done < 4)
  call @$F(4, reqs, idx, flag, st, ierr)
  if (flag .and. idx /= MPI_UNDEFINED) done = done + 1
end do
""" + F_DONE4,
    ("testsome", "b"): F_POST4 + """done = 0
do while (done < 4)
  call @$F(4, reqs, outc, idxs, sts, ierr)
  if (outc == MPI_UNDEFINED) then
    errs = errs + 1
    exit
  end if
  done = done + outc
end do
""" + F_DONE4,
    ("request_get_status", "b"): F_POST4 + """do k = 1, 4
  flag = .false.
  do while (.not. flag)
    call @$F(reqs(k), flag, st, ierr)
  end do
  call @MPI_Wait(reqs(k), st, ierr)
end do
""" + F_DONE4,
    ("start", "b", ""): """call @MPI_Recv_init(rbuf, 4, MPI_INTEGER, partner, 22, W, reqs(1), ierr)
call @MPI_Send_init(sbuf, 4, MPI_INTEGER, partner, 22, W, reqs(2), ierr)
call @$F(reqs(1), ierr)
call @$F(reqs(2), ierr)
call msg(1)
call @MPI_Waitall(2, reqs, sts, ierr)
call add(rbuf, 4)
call @MPI_Request_free(reqs(1), ierr)
call @MPI_Request_free(reqs(2), ierr)
""",
    ("start", "b", "all"): """call @MPI_Recv_init(rbuf, 4, MPI_INTEGER, partner, 22, W, reqs(1), ierr)
call @MPI_Send_init(sbuf, 4, MPI_INTEGER, partner, 22, W, reqs(2), ierr)
call @$F(2, reqs, ierr)
call msg(1)
call @MPI_Waitall(2, reqs, sts, ierr)
call add(rbuf, 4)
call @MPI_Request_free(reqs(1), ierr)
call @MPI_Request_free(reqs(2), ierr)
""",
    ("cancel", "b"): """call @MPI_Irecv(rbuf, 4, MPI_INTEGER, rank, 999, W, req, ierr)
call @$F(req, ierr)
call @MPI_Wait(req, st, ierr)
call @MPI_Test_cancelled(st, flag, ierr)
if (.not. flag) errs = errs + 1
""",
    ("request_free", "b"): """if (sender) then
  call @MPI_Isend(sbuf, 4, MPI_INTEGER, partner, 23, W, req, ierr)
  call msg(1)
  call @$F(req, ierr)
else
  call @MPI_Recv(rbuf, 4, MPI_INTEGER, partner, 23, W, st, ierr)
  call add(rbuf, 4)
end if
call @MPI_Barrier(W, ierr)
""",
    ("pcontrol", "b"): "call @$F(0)\ncall @$F(1)\n",
    ("rma", "b", "put"): """call @MPI_Win_fence(0, gwin, ierr)
call @$F(sbuf, 4, MPI_INTEGER, partner, d0, 4, MPI_INTEGER, gwin, ierr)
call @MPI_Win_fence(0, gwin, ierr)
call add(wbuf, 4)
""",
    ("rma", "nb", "put"): """call @MPI_Win_lock_all(0, gwin, ierr)
call @$F(sbuf, 4, MPI_INTEGER, partner, d4, 4, MPI_INTEGER, gwin, req, ierr)
call @MPI_Wait(req, st, ierr)
call @MPI_Win_unlock_all(gwin, ierr)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "b", "accumulate"): """call @MPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, gwin, ierr)
call @$F(sbuf, 4, MPI_INTEGER, partner, d8, 4, MPI_INTEGER, MPI_SUM, gwin, ierr)
call @MPI_Win_flush(partner, gwin, ierr)
call @MPI_Win_unlock(partner, gwin, ierr)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "nb", "accumulate"): """call @MPI_Win_lock_all(0, gwin, ierr)
call @$F(sbuf, 4, MPI_INTEGER, partner, d8, 4, MPI_INTEGER, MPI_SUM, gwin, req, ierr)
call @MPI_Wait(req, st, ierr)
call @MPI_Win_unlock_all(gwin, ierr)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "b", "get"): """call @MPI_Comm_group(W, wgrp, ierr)
pr(1) = partner
call @MPI_Group_incl(wgrp, 1, pr, pgrp, ierr)
call @MPI_Win_post(pgrp, 0, gwin, ierr)
call @MPI_Win_start(pgrp, 0, gwin, ierr)
call @$F(rbuf, 4, MPI_INTEGER, partner, d0, 4, MPI_INTEGER, gwin, ierr)
call @MPI_Win_complete(gwin, ierr)
call @MPI_Win_wait(gwin, ierr)
call add(rbuf, 4)
call @MPI_Group_free(pgrp, ierr)
call @MPI_Group_free(wgrp, ierr)
""",
    ("rma", "nb", "get"): """call @MPI_Win_lock_all(0, gwin, ierr)
call @$F(rbuf, 4, MPI_INTEGER, partner, d0, 4, MPI_INTEGER, gwin, req, ierr)
call @MPI_Wait(req, st, ierr)
call @MPI_Win_unlock_all(gwin, ierr)
call add(rbuf, 4)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "b", "get_accumulate"): """call @MPI_Win_lock_all(0, gwin, ierr)
call @$F(sbuf, 4, MPI_INTEGER, rbuf, 4, MPI_INTEGER, partner, d12, 4, MPI_INTEGER, MPI_SUM, gwin, ierr)
call @MPI_Win_flush_all(gwin, ierr)
call @MPI_Win_unlock_all(gwin, ierr)
call add(rbuf, 4)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "nb", "get_accumulate"): """call @MPI_Win_lock_all(0, gwin, ierr)
call @$F(sbuf, 4, MPI_INTEGER, rbuf, 4, MPI_INTEGER, partner, d12, 4, MPI_INTEGER, MPI_SUM, gwin, req, ierr)
call @MPI_Wait(req, st, ierr)
call @MPI_Win_unlock_all(gwin, ierr)
call add(rbuf, 4)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "b", "fetch_and_op"): """call @MPI_Win_lock(MPI_LOCK_SHARED, partner, 0, gwin, ierr)
call @$F(sbuf, rbuf, MPI_INTEGER, partner, d13, MPI_SUM, gwin, ierr)
call @MPI_Win_unlock(partner, gwin, ierr)
call add(rbuf, 1)
call @MPI_Barrier(W, ierr)
""",
    ("rma", "b", "compare_and_swap"): """call @MPI_Win_lock(MPI_LOCK_EXCLUSIVE, partner, 0, gwin, ierr)
call @$F(sbuf, rbuf2, rbuf, MPI_INTEGER, partner, d14, gwin, ierr)
call @MPI_Win_unlock(partner, gwin, ierr)
call add(rbuf, 1)
call @MPI_Barrier(W, ierr)
""",
    "MPI_Win_create": """call @$F(wbuf2, wsize, 4, MPI_INFO_NULL, W, win, ierr)
call @MPI_Win_fence(0, win, ierr)
call @MPI_Win_fence(0, win, ierr)
call @MPI_Win_free(win, ierr)
""",
    "MPI_Win_allocate": """call @$F(wsize, 4, MPI_INFO_NULL, W, baseptr, win, ierr)
call @MPI_Win_fence(0, win, ierr)
call @MPI_Win_fence(0, win, ierr)
call @MPI_Win_free(win, ierr)
""",
    "MPI_Win_create_dynamic": """call @$F(MPI_INFO_NULL, W, win, ierr)
call @MPI_Win_free(win, ierr)
""",
}
F_T["MPI_Win_allocate_shared"] = F_T["MPI_Win_allocate"]

F_COLL = {
    "barrier": [("W", "")],
    "bcast": [("sbuf, 4, MPI_INTEGER, 0, W", "call add(sbuf, 4)")],
    "reduce": [("sbuf, rbuf, 4, MPI_INTEGER, MPI_SUM, 0, W", "if (rank == 0) call add(rbuf, 4)")],
    "allreduce": [("sbuf, rbuf, 4, MPI_INTEGER, MPI_SUM, W", "call add(rbuf, 4)"),
                  ("MPI_IN_PLACE, sbuf, 4, MPI_INTEGER, MPI_SUM, W", "call add(sbuf, 4)")],
    "reduce_scatter": [("sbuf, rbuf, cnts, MPI_INTEGER, MPI_SUM, W", "call add(rbuf, 2)")],
    "reduce_scatter_block": [("sbuf, rbuf, 2, MPI_INTEGER, MPI_SUM, W", "call add(rbuf, 2)")],
    "scan": [("sbuf, rbuf, 4, MPI_INTEGER, MPI_SUM, W", "call add(rbuf, 4)")],
    "exscan": [("sbuf, rbuf, 4, MPI_INTEGER, MPI_SUM, W", "if (rank > 0) call add(rbuf, 4)")],
    "gather": [("sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, 0, W", "if (rank == 0) call add(rbuf, 8)")],
    "gatherv": [("sbuf, 2, MPI_INTEGER, rbuf, cnts, dsp, MPI_INTEGER, 0, W", "if (rank == 0) call add(rbuf, 8)")],
    "scatter": [("sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, 0, W", "call add(rbuf, 2)")],
    "scatterv": [("sbuf, cnts, dsp, MPI_INTEGER, rbuf, 2, MPI_INTEGER, 0, W", "call add(rbuf, 2)")],
    "allgather": [("sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, W", "call add(rbuf, 8)")],
    "allgatherv": [("sbuf, 2, MPI_INTEGER, rbuf, cnts, dsp, MPI_INTEGER, W", "call add(rbuf, 8)"),
                   ("MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, cnts, dsp, MPI_INTEGER, W", "call add(rbuf, 8)")],
    "alltoall": [("sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, W", "call add(rbuf, 8)")],
    "alltoallv": [("sbuf, cnts, dsp, MPI_INTEGER, rbuf, cnts, dsp, MPI_INTEGER, W", "call add(rbuf, 8)")],
    "alltoallw": [("sbuf, cnts, wdsp, tys, rbuf, cnts, wdsp, tys, W", "call add(rbuf, 8)")],
    "neighbor_allgather": [("sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, ring", "call add(rbuf, 4)")],
    "neighbor_allgatherv": [("sbuf, 2, MPI_INTEGER, rbuf, cnts, dsp, MPI_INTEGER, ring", "call add(rbuf, 4)")],
    "neighbor_alltoall": [("sbuf, 2, MPI_INTEGER, rbuf, 2, MPI_INTEGER, ring", "call add(rbuf, 4)")],
    "neighbor_alltoallv": [("sbuf, cnts, dsp, MPI_INTEGER, rbuf, cnts, dsp, MPI_INTEGER, ring",
                            "call add(rbuf, 4)")],
    "neighbor_alltoallw": [("sbuf, cnts, adsp, tys, rbuf, cnts, adsp, tys, ring", "call add(rbuf, 4)")],
}
F_COLL_MODE = {
    "b": "call @$F($ARGS, ierr)\n",
    "nb": "call @$F($ARGS, req, ierr)\ncall @MPI_Wait(req, MPI_STATUS_IGNORE, ierr)\n",
    "pi": "call @$F($ARGS, MPI_INFO_NULL, preq, ierr)\ncall @MPI_Start(preq, ierr)\n"
          "call @MPI_Wait(preq, MPI_STATUS_IGNORE, ierr)\ncall @MPI_Request_free(preq, ierr)\n",
}


F_HEAD = """! matrix_@LANG@: generated by tests/matrix/gen_matrix.py from core/mpi_calls.tsv; do not edit.
! Calls every routine of the covered classes that this MPI has (@LANGNAME@), counts its own calls,
! and writes the counts to matrix_counts.<rank>.txt for tests/matrix/matrix.py.
program matrix_@LANG@
  @USE@
  implicit none
  @INCLUDE@
  integer, parameter :: NROUTINES = @NROUTINES@
  integer(8) :: mx_n(NROUTINES) = 0
  character(len=48) :: mx_names(NROUTINES)
  integer(8) :: mx_msgs = 0, mx_coll = 0, mx_rma = 0, mx_markers = 0
  integer(8) :: chk = 0, allchk(@NP@)
  integer :: rank, size, partner, errs = 0, total_errs, ierr, k, n, idx, outc, done, i
  integer :: idxs(4), nb(2), pr(1), cnts(4), dsp(4), wdsp(4)
  integer(kind=MPI_ADDRESS_KIND) :: adsp(4), wsize, d0 = 0, d4 = 4, d8 = 8, d12 = 12, d13 = 13, d14 = 14
  logical :: sender, flag
  integer, asynchronous :: sbuf(16), sbuf2(16), rbuf(16), rbuf2(16), wbuf(16), wbuf2(16)
  integer :: bsend_buffer(16384)
  character(len=64) :: path
@DECLS@
@NAMES@
  call @MPI_Init(ierr)
  call @MPI_Comm_rank(W, rank, ierr)
  call @MPI_Comm_size(W, size, ierr)
  if (size /= @NP@) then
    if (rank == 0) write (0, '(A,I0)') 'matrix_@LANG@: run on @NP@ ranks, not ', size
    call @MPI_Abort(W, 2, ierr)
  end if
  partner = ieor(rank, 1)
  sender = mod(rank, 2) == 0
  do i = 1, 4
    cnts(i) = 2
    dsp(i) = 2 * (i - 1)
    wdsp(i) = 8 * (i - 1)
    adsp(i) = 8 * (i - 1)
    tys(i) = MPI_INTEGER
  end do
  wsize = 64
  ! for the buffered sends; kept to the end
  call @MPI_Buffer_attach(bsend_buffer, 65536, ierr)
  ! neighbours: the ranks on either side, as a distributed graph (MPICH 4.0.2's mpi_f08
  ! neighbour collectives reject a Cartesian communicator); MPI_UNWEIGHTED is a sentinel to test
  nb(1) = modulo(rank - 1, size)
  nb(2) = modulo(rank + 1, size)
  call @MPI_Dist_graph_create_adjacent(W, 2, nb, MPI_UNWEIGHTED, 2, nb, MPI_UNWEIGHTED, MPI_INFO_NULL, .false., ring, ierr)
  call @MPI_Win_create(wbuf, wsize, 4, MPI_INFO_NULL, W, gwin, ierr)
"""

F_TAIL = """
  call @MPI_Win_free(gwin, ierr)
  call @MPI_Comm_free(ring, ierr)
  call @MPI_Gather(chk, 1, MPI_INTEGER8, allchk, 1, MPI_INTEGER8, 0, W, ierr)
  call @MPI_Allreduce(errs, total_errs, 1, MPI_INTEGER, MPI_SUM, W, ierr)
  if (rank == 0) then
    write (*, '(A,I0,A,I0,A)') 'matrix_@LANG@: ', @NCASES@, ' cases on ', size, ' ranks'
    do i = 1, size
      write (*, '(A,I0,A,I0)') 'rank ', i - 1, ' checksum ', allchk(i)
    end do
    if (total_errs == 0) then
      write (*, '(A)') 'No Errors'
    else
      write (*, '(I0,A)') total_errs, ' Errors'
    end if
  end if
  write (path, '(A,I0,A)') 'matrix_counts.', rank, '.txt'
  open (unit=11, file=trim(path), status='replace', action='write')
  do i = 1, NROUTINES
    if (mx_n(i) > 0) write (11, '(A,1X,I0)') trim(mx_names(i)), mx_n(i)
  end do
  write (11, '(A)') 'MPI_Finalize 1'
  write (11, '(A,I0)') 'messages ', mx_msgs
  write (11, '(A,I0)') 'collectives ', mx_coll
  write (11, '(A,I0)') 'rma ', mx_rma
  write (11, '(A,I0)') 'markers ', mx_markers
  close (11)
  call @MPI_Finalize(ierr)

contains

  ! A checksum of what a rank received, in the order received: the output the tools must not change.
  subroutine add(a, m)
    integer, intent(in) :: a(*)
    integer, intent(in) :: m
    integer :: j
    do j = 1, m
      chk = modulo(chk * 31_8 + int(a(j), 8) + 7_8, 1000000007_8)
    end do
  end subroutine add

  subroutine msg(m)
    integer, intent(in) :: m
    mx_msgs = mx_msgs + m
  end subroutine msg

  ! Each case sends values that name the rank, the case and the element.
  subroutine fill(c)
    integer, intent(in) :: c
    integer :: j
    do j = 1, 16
      sbuf(j) = rank * 1000 + c * 16 + j - 1
      sbuf2(j) = -sbuf(j)
      rbuf(j) = -1
      rbuf2(j) = -1
    end do
  end subroutine fill
end program matrix_@LANG@
"""

F_DECLS_OLD = """  integer :: req, preqs(1), reqs(4), msgh, gwin, win, wgrp, pgrp, ring, tys(4)
  integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 4)
  integer(kind=MPI_ADDRESS_KIND) :: baseptr
"""
F_DECLS_F08 = """  type(MPI_Request) :: req, preqs(1), reqs(4)
  type(MPI_Message) :: msgh
  type(MPI_Win) :: gwin, win
  type(MPI_Group) :: wgrp, pgrp
  type(MPI_Comm) :: ring
  type(MPI_Datatype) :: tys(4)
  type(MPI_Status) :: st, sts(4)
  type(c_ptr) :: baseptr
"""
