"""The message-accounting programs' Fortran templates (mpif.h, use mpi and use mpi_f08 share them):
one per class (and mode, or shape), the head, tail and declarations.

Read by gen_accounting.py, whose docstring says what the markup means (`call @MPI_X(`, `$F`,
`call msg(n)`, `$STATUS`, `$READY`, `$SOURCE(st)`, `$TAG(st)`) and which variables a template sees.
A line holding $STATUS must be a plain `call`: it becomes an if/else of two calls."""

# Pieces several templates share: the sender's one message, then a barrier so that the receiver
# polls little (each poll is a state in the log); the receiver's matched probe and matched
# receive, blocking in even iterations and nonblocking in odd ones.
F_SEND_THEN_BARRIER = """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, tg, cm, ierr)
  call msg(1)
end if
! the message is on its way: few polls (each one a state in the log)
call @MPI_Barrier(cm, ierr)
"""
F_MPROBE_OR_IMPROBE = """  if (mod(k, 2) == 1) then
    flag = .false.
    do while (.not. flag)
      call @MPI_Improbe(src, rtag, cm, flag, msgh, st, ierr)
    end do
  else
    call @MPI_Mprobe(src, rtag, cm, msgh, st, ierr)
  end if
"""
F_MRECV_OR_IMRECV = """  if (mod(k, 2) == 1) then
    call @MPI_Imrecv(rbuf, 4, MPI_INTEGER, msgh, reqs(1), ierr)
    call wait1(reqs(1))
  else
    call @MPI_Mrecv(rbuf, 4, MPI_INTEGER, msgh, $STATUS, ierr)
  end if
"""

# As the C ones (templates_acct_c.py); reqs(1) is C's req, reqs(2) its reqs[0].
A_F = {
    ("send", "b"): ("", """if (.not. sender) call @MPI_Irecv(rbuf, 4, MPI_INTEGER, src, rtag, cm, reqs(1), ierr)
$READY call @MPI_Barrier(cm, ierr)
if (sender) then
  call @$F(sbuf, 4, MPI_INTEGER, partner, tg, cm, ierr)
  call msg(1)
  call @$F(sbuf, 4, MPI_INTEGER, MPI_PROC_NULL, tg, cm, ierr)
else
  call wait1(reqs(1))
  call add(rbuf, 4)
end if
""", ""),
    ("send", "nb"): ("", """if (.not. sender) call @MPI_Irecv(rbuf, 4, MPI_INTEGER, src, rtag, cm, reqs(1), ierr)
$READY call @MPI_Barrier(cm, ierr)
if (sender) then
  call @$F(sbuf, 4, MPI_INTEGER, partner, tg, cm, reqs(1), ierr)
  call msg(1)
  call @$F(sbuf, 4, MPI_INTEGER, MPI_PROC_NULL, tg, cm, reqs(2), ierr)
  call wait1(reqs(2))
end if
call wait1(reqs(1))
if (.not. sender) call add(rbuf, 4)
""", ""),
    ("send", "pi"): ("""if (sender) then
  call @$F(sbuf, 4, MPI_INTEGER, partner, tg, cm, pq(1), ierr)
  call @$F(sbuf, 4, MPI_INTEGER, MPI_PROC_NULL, tg, cm, pq(2), ierr)
end if
""", """if (.not. sender) call @MPI_Irecv(rbuf, 4, MPI_INTEGER, src, rtag, cm, reqs(1), ierr)
$READY call @MPI_Barrier(cm, ierr)
if (sender) then
  if (mod(k, 2) == 1) then
    call @MPI_Startall(2, pq, ierr)
  else
    call @MPI_Start(pq(1), ierr)
    call @MPI_Start(pq(2), ierr)
  end if
  call msg(1)
  call wait1(pq(1))
  call wait1(pq(2))
else
  call wait1(reqs(1))
  call add(rbuf, 4)
end if
""", """if (sender) then
  call @MPI_Request_free(pq(1), ierr)
  call @MPI_Request_free(pq(2), ierr)
end if
"""),
    # No MPI_Parrived, unlike the C one: MPICH 4.0.2's `use mpi` declares its flag INTEGER.
    ("send", "pi", "partitioned"): ("""if (sender) then
  call @$F(sbuf, 2, 2_8, MPI_INTEGER, partner, tg, cm, MPI_INFO_NULL, pq(1), ierr)
else
  call @MPI_Precv_init(rbuf, 2, 2_8, MPI_INTEGER, partner, tg, cm, MPI_INFO_NULL, pq(1), ierr)
end if
""", """if (mod(k, 2) == 1) then
  call @MPI_Startall(1, pq, ierr)
else
  call @MPI_Start(pq(1), ierr)
end if
if (sender) then
  call @MPI_Pready(1, pq(1), ierr)
  call @MPI_Pready(0, pq(1), ierr)
  call msg(1)
end if
call wait1(pq(1))
if (.not. sender) call add(rbuf, 4)
""", """call @MPI_Request_free(pq(1), ierr)
"""),
    ("recv", "pi", "partitioned"): ("""if (sender) then
  call @MPI_Psend_init(sbuf, 2, 2_8, MPI_INTEGER, partner, tg, cm, MPI_INFO_NULL, pq(1), ierr)
else
  call @$F(rbuf, 2, 2_8, MPI_INTEGER, partner, tg, cm, MPI_INFO_NULL, pq(1), ierr)
end if
""", """if (mod(k, 2) == 1) then
  call @MPI_Startall(1, pq, ierr)
else
  call @MPI_Start(pq(1), ierr)
end if
if (sender) then
  call @MPI_Pready(0, pq(1), ierr)
  call @MPI_Pready(1, pq(1), ierr)
  call msg(1)
end if
call wait1(pq(1))
if (.not. sender) call add(rbuf, 4)
""", """call @MPI_Request_free(pq(1), ierr)
"""),
    ("recv", "b"): ("", """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, tg, cm, ierr)
  call msg(1)
else
  call @$F(rbuf, 4, MPI_INTEGER, src, rtag, cm, $STATUS, ierr)
  call add(rbuf, 4)
  call @$F(rbuf2, 4, MPI_INTEGER, MPI_PROC_NULL, rtag, cm, $STATUS, ierr)
end if
""", ""),
    ("recv", "nb"): ("", """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, tg, cm, ierr)
  call msg(1)
else
  call @$F(rbuf, 4, MPI_INTEGER, src, rtag, cm, reqs(1), ierr)
  call @$F(rbuf2, 4, MPI_INTEGER, MPI_PROC_NULL, rtag, cm, reqs(2), ierr)
  call wait1(reqs(1))
  call wait1(reqs(2))
  call add(rbuf, 4)
end if
""", ""),
    ("recv", "pi"): ("""if (.not. sender) then
  call @$F(rbuf, 4, MPI_INTEGER, csrc, ctag, cm, pq(1), ierr)
  call @$F(rbuf2, 4, MPI_INTEGER, MPI_PROC_NULL, ctag, cm, pq(2), ierr)
end if
""", """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, tg, cm, ierr)
  call msg(1)
else
  if (mod(k, 2) == 1) then
    call @MPI_Startall(2, pq, ierr)
  else
    call @MPI_Start(pq(1), ierr)
    call @MPI_Start(pq(2), ierr)
  end if
  call wait1(pq(1))
  call wait1(pq(2))
  call add(rbuf, 4)
end if
""", """if (.not. sender) then
  call @MPI_Request_free(pq(1), ierr)
  call @MPI_Request_free(pq(2), ierr)
end if
"""),
    ("sendrecv", "b", ""): ("", """call @$F(sbuf, 4, MPI_INTEGER, partner, tg, rbuf, 4, MPI_INTEGER, src, rtag, cm, $STATUS, ierr)
call msg(1)
call add(rbuf, 4)
if (sender) then
  call @$F(sbuf, 4, MPI_INTEGER, partner, tg, rbuf2, 4, MPI_INTEGER, MPI_PROC_NULL, rtag, cm, $STATUS, ierr)
  call msg(1)
else
  call @$F(sbuf, 4, MPI_INTEGER, MPI_PROC_NULL, tg, rbuf2, 4, MPI_INTEGER, src, rtag, cm, $STATUS, ierr)
  call add(rbuf2, 4)
end if
""", ""),
    # MPI_Isendrecv(_replace) names its partner and tag: MPICH 4.0.2 completes it with an empty
    # status (source 0, tag 0, count 0), so neither the program nor a tool can learn the source or
    # tag of a wildcard one (docs/liblog.md, "Messages MPI does not describe").
    ("sendrecv", "nb", ""): ("", """call @$F(sbuf, 4, MPI_INTEGER, partner, tg, rbuf, 4, MPI_INTEGER, partner, tg, cm, reqs(1), ierr)
call wait1(reqs(1))
call msg(1)
call add(rbuf, 4)
if (sender) then
  call @$F(sbuf, 4, MPI_INTEGER, partner, tg, rbuf2, 4, MPI_INTEGER, MPI_PROC_NULL, rtag, cm, reqs(1), ierr)
  call msg(1)
else
  call @$F(sbuf, 4, MPI_INTEGER, MPI_PROC_NULL, tg, rbuf2, 4, MPI_INTEGER, partner, tg, cm, reqs(1), ierr)
end if
call wait1(reqs(1))
if (.not. sender) call add(rbuf2, 4)
""", ""),
    ("sendrecv", "b", "replace"): ("", """call @$F(sbuf, 4, MPI_INTEGER, partner, tg, src, rtag, cm, $STATUS, ierr)
call msg(1)
call add(sbuf, 4)
if (sender) then
  call @$F(sbuf, 4, MPI_INTEGER, partner, tg, MPI_PROC_NULL, rtag, cm, $STATUS, ierr)
  call msg(1)
else
  call @$F(sbuf, 4, MPI_INTEGER, MPI_PROC_NULL, tg, src, rtag, cm, $STATUS, ierr)
  call add(sbuf, 4)
end if
""", ""),
    ("sendrecv", "nb", "replace"): ("", """call @$F(sbuf, 4, MPI_INTEGER, partner, tg, partner, tg, cm, reqs(1), ierr)
call wait1(reqs(1))
call msg(1)
call add(sbuf, 4)
if (sender) then
  call @$F(sbuf, 4, MPI_INTEGER, partner, tg, MPI_PROC_NULL, rtag, cm, reqs(1), ierr)
  call msg(1)
else
  call @$F(sbuf, 4, MPI_INTEGER, MPI_PROC_NULL, tg, partner, tg, cm, reqs(1), ierr)
end if
call wait1(reqs(1))
if (.not. sender) call add(sbuf, 4)
""", ""),
    ("probe", "b"): ("", """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, tg, cm, ierr)
  call msg(1)
else
  call @$F(MPI_PROC_NULL, rtag, cm, st, ierr)
  call @$F(src, rtag, cm, st, ierr)
  call @MPI_Get_count(st, MPI_INTEGER, n, ierr)
  psrc = $SOURCE(st)
  ptag = $TAG(st)
  call @MPI_Recv(rbuf, n, MPI_INTEGER, psrc, ptag, cm, $STATUS, ierr)
  call add(rbuf, 4)
end if
""", ""),
    ("probe", "nb"): ("", F_SEND_THEN_BARRIER + """if (.not. sender) then
  call @$F(MPI_PROC_NULL, rtag, cm, flag, st, ierr)
  flag = .false.
  do while (.not. flag)
    call @$F(src, rtag, cm, flag, st, ierr)
  end do
  psrc = $SOURCE(st)
  ptag = $TAG(st)
  call @MPI_Recv(rbuf, 4, MPI_INTEGER, psrc, ptag, cm, $STATUS, ierr)
  call add(rbuf, 4)
end if
""", ""),
    ("mprobe", "b"): ("", """if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, tg, cm, ierr)
  call msg(1)
else
  call @$F(MPI_PROC_NULL, rtag, cm, msgh0, st, ierr)
  call @$F(src, rtag, cm, msgh, st, ierr)
  call @MPI_Mrecv(rbuf2, 4, MPI_INTEGER, msgh0, $STATUS, ierr)
""" + F_MRECV_OR_IMRECV + """  call add(rbuf, 4)
end if
""", ""),
    ("mprobe", "nb"): ("", F_SEND_THEN_BARRIER + """if (.not. sender) then
  call @$F(MPI_PROC_NULL, rtag, cm, flag, msgh0, st, ierr)
  flag = .false.
  do while (.not. flag)
    call @$F(src, rtag, cm, flag, msgh, st, ierr)
  end do
  call @MPI_Mrecv(rbuf2, 4, MPI_INTEGER, msgh0, $STATUS, ierr)
""" + F_MRECV_OR_IMRECV + """  call add(rbuf, 4)
end if
""", ""),
    ("mrecv", "b"): ("", F_SEND_THEN_BARRIER + """if (.not. sender) then
  call @MPI_Mprobe(MPI_PROC_NULL, rtag, cm, msgh0, st, ierr)
""" + F_MPROBE_OR_IMPROBE + """  call @$F(rbuf2, 4, MPI_INTEGER, msgh0, $STATUS, ierr)
  call @$F(rbuf, 4, MPI_INTEGER, msgh, $STATUS, ierr)
  call add(rbuf, 4)
end if
""", ""),
    ("mrecv", "nb"): ("", F_SEND_THEN_BARRIER + """if (.not. sender) then
  call @MPI_Mprobe(MPI_PROC_NULL, rtag, cm, msgh0, st, ierr)
""" + F_MPROBE_OR_IMPROBE + """  call @$F(rbuf2, 4, MPI_INTEGER, msgh0, reqs(2), ierr)
  call @$F(rbuf, 4, MPI_INTEGER, msgh, reqs(1), ierr)
  call wait1(reqs(1))
  call wait1(reqs(2))
  call add(rbuf, 4)
end if
""", ""),
    ("start", "b", ""): ("""if (sender) then
  call @MPI_Send_init(sbuf, 4, MPI_INTEGER, partner, tg, cm, pq(1), ierr)
else
  call @MPI_Recv_init(rbuf, 4, MPI_INTEGER, csrc, ctag, cm, pq(1), ierr)
end if
""", """call @$F(pq(1), ierr)
if (sender) call msg(1)
call wait1(pq(1))
if (.not. sender) call add(rbuf, 4)
""", """call @MPI_Request_free(pq(1), ierr)
"""),
    ("start", "b", "all"): ("""if (sender) then
  call @MPI_Send_init(sbuf, 4, MPI_INTEGER, partner, tg, cm, pq(1), ierr)
else
  call @MPI_Recv_init(rbuf, 4, MPI_INTEGER, csrc, ctag, cm, pq(1), ierr)
end if
""", """call @$F(1, pq, ierr)
if (sender) call msg(1)
call wait1(pq(1))
if (.not. sender) call add(rbuf, 4)
""", """call @MPI_Request_free(pq(1), ierr)
"""),
    ("cancel", "b"): ("""if (.not. sender) call @MPI_Recv_init(rbuf, 4, MPI_INTEGER, csrc, ctag, cm, pq(1), ierr)
""", """call @MPI_Irecv(rbuf2, 4, MPI_INTEGER, partner, 30000, cm, reqs(1), ierr)
call @$F(reqs(1), ierr)
if (ignore) then
  call wait1(reqs(1))
else
  call @MPI_Wait(reqs(1), st, ierr)
  call @MPI_Test_cancelled(st, flag, ierr)
  if (.not. flag) errs = errs + 1
end if
if (.not. sender) then
  call @MPI_Start(pq(1), ierr)
  call @$F(pq(1), ierr)
  call wait1(pq(1))
end if
call @MPI_Barrier(cm, ierr)
if (sender) then
  call @MPI_Send(sbuf, 4, MPI_INTEGER, partner, tg, cm, ierr)
  call msg(1)
else
  call @MPI_Start(pq(1), ierr)
  call wait1(pq(1))
  call add(rbuf, 4)
end if
""", """if (.not. sender) call @MPI_Request_free(pq(1), ierr)
"""),
    ("request_free", "b"): ("", """if (sender) then
  call @MPI_Isend(sbuf, 4, MPI_INTEGER, partner, tg, cm, reqs(1), ierr)
  call msg(1)
  call @$F(reqs(1), ierr)
else
  call @MPI_Recv(rbuf, 4, MPI_INTEGER, src, rtag, cm, $STATUS, ierr)
  call add(rbuf, 4)
end if
call @MPI_Barrier(cm, ierr)
""", ""),
}


A_F_HEAD = """! acct_@LANG@: generated by tests/matrix/gen_accounting.py from core/mpi_calls.tsv; do not edit.
! Moves point-to-point messages with every routine of the table that moves one (@LANGNAME@), on
! MPI_COMM_WORLD and on a communicator whose ranks are reversed; counts each message by its
! destination's world rank; writes matrix_counts.<rank>.txt for tests/matrix/accounting.py.
program acct_@LANG@
  @USE@
  implicit none
  @INCLUDE@
  integer, parameter :: NROUTINES = @NROUTINES@
  integer(8) :: mx_n(NROUTINES) = 0
  character(len=48) :: mx_names(NROUTINES)
  integer(8) :: mx_msgs = 0, mx_coll = 0, mx_rma = 0, mx_markers = 0, mx_pair(@NP@) = 0
  integer(8) :: chk = 0, allchk(@NP@)
  integer :: rank, size, partner, wpartner, src, rtag, csrc, ctag, tg, k, kk, ic, psrc, ptag
  integer :: errs = 0, total_errs, ierr, n, i, niter
  logical :: sender, ignore, flag
  integer, asynchronous :: sbuf(16), rbuf(16), rbuf2(16)
  integer :: bsend_buffer(16384)
  character(len=64) :: path
  character(len=2000) :: only
@DECLS@
@NAMES@
  ! ACCT_ONLY=<routine>[,<routine>...] runs those cases alone (accounting.py --each: which case a
  ! count misses, or which cases together)
  call get_environment_variable('ACCT_ONLY', only)
  call @MPI_Init(ierr)
  call @MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call @MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  if (size /= @NP@) then
    if (rank == 0) write (0, '(A,I0)') 'acct_@LANG@: run on @NP@ ranks, not ', size
    call @MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  ! for the buffered sends; kept to the end
  call @MPI_Buffer_attach(bsend_buffer, 65536, ierr)
  comms(1) = MPI_COMM_WORLD
  ! key size - rank: comm rank = size - 1 - world rank, so comm and world pairs differ
  call @MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, comms(2), ierr)
"""

A_F_CASE = """  ! case @I@: @NAME@ (@CLASS@, @MODE@)
  do ic = 1, 2
    if (len_trim(only) > 0 .and. index(',' // trim(only) // ',', ',@NAME@,') == 0) exit
    call use_comm(ic, @TAG@)
    call fill(@I@)
@PRE@    niter = @ITER0@
    if (ic == 2) niter = @ITER1@
    do kk = 0, niter - 1
      call iteration(kk)
@BODY@    end do
@POST@  end do
"""

A_F_TAIL = """
  call @MPI_Comm_free(comms(2), ierr)
  call @MPI_Gather(chk, 1, MPI_INTEGER8, allchk, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  call @MPI_Allreduce(errs, total_errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    write (*, '(A,I0,A,I0,A)') 'acct_@LANG@: ', @NCASES@, ' cases on ', size, ' ranks'
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
  do i = 1, size
    if (mx_pair(i) > 0) write (11, '(A,I0,1X,I0,1X,I0)') 'pair ', rank, i - 1, mx_pair(i)
  end do
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

  ! m messages to the partner, counted by its world rank.
  subroutine msg(m)
    integer, intent(in) :: m
    mx_msgs = mx_msgs + m
    mx_pair(wpartner + 1) = mx_pair(wpartner + 1) + m
  end subroutine msg

  ! Each case sends values that name the rank, the case and the element.
  subroutine fill(c)
    integer, intent(in) :: c
    integer :: j
    do j = 1, 16
      sbuf(j) = rank * 1000 + c * 16 + j - 1
      rbuf(j) = -1
      rbuf2(j) = -1
    end do
  end subroutine fill

  ! Makes communicator c current (1: MPI_COMM_WORLD, 2: the reversed one) for a case of tag t:
  ! pairs of its ranks (0,1) (2,3), the even one sending, and the partner's world rank.
  subroutine use_comm(c, t)
    integer, intent(in) :: c, t
    integer :: crank, pr(1), wr(1)
@GROUPDECL@
    cm = comms(c)
    tg = t
    call @MPI_Comm_rank(cm, crank, ierr)
    partner = ieor(crank, 1)
    sender = mod(crank, 2) == 0
    call @MPI_Comm_group(cm, g, ierr)
    call @MPI_Comm_group(MPI_COMM_WORLD, wg, ierr)
    pr(1) = partner
    call @MPI_Group_translate_ranks(g, 1, pr, wg, wr, ierr)
    wpartner = wr(1)
    call @MPI_Group_free(g, ierr)
    call @MPI_Group_free(wg, ierr)
    ! a persistent receive names its source and tag once: named on WORLD, wildcards on the other
    csrc = partner
    ctag = tg
    if (c == 2) then
      csrc = MPI_ANY_SOURCE
      ctag = MPI_ANY_TAG
    end if
  end subroutine use_comm

  ! Iteration j: a status (even) or MPI_STATUS(ES)_IGNORE (odd); receives name the
  ! partner and tag (0), MPI_ANY_SOURCE (1), both wildcards (2), MPI_ANY_TAG (3).
  subroutine iteration(j)
    integer, intent(in) :: j
    k = j
    ignore = mod(k, 2) == 1
    src = partner
    rtag = tg
    if (mod(k, 4) == 1 .or. mod(k, 4) == 2) src = MPI_ANY_SOURCE
    if (mod(k, 4) >= 2) rtag = MPI_ANY_TAG
  end subroutine iteration

  ! Completes one request: MPI_Wait in iterations 0 and 1, MPI_Waitall in 2 and 3.
  subroutine wait1(r)
@REQDECL@
    if (mod(k, 4) < 2) then
      call @MPI_Wait(r(1), $STATUS, ierr)
    else
      call @MPI_Waitall(1, r, $STATUSES, ierr)
    end if
  end subroutine wait1
end program acct_@LANG@
"""

A_F_DECLS_OLD = """  integer :: cm, comms(2), reqs(4), pq(2), msgh, msgh0
  integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 4)
"""
A_F_DECLS_F08 = """  type(MPI_Comm) :: cm, comms(2)
  type(MPI_Request) :: reqs(4), pq(2)
  type(MPI_Message) :: msgh, msgh0
  type(MPI_Status) :: st, sts(4)
"""
A_F_GROUPDECL = {"old": "    integer :: g, wg", "f08": "    type(MPI_Group) :: g, wg"}
A_F_REQDECL = {"old": "    integer, intent(inout) :: r(1)", "f08": "    type(MPI_Request), intent(inout) :: r(1)"}
