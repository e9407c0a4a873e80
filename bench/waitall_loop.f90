! N rounds of two MPI_IRECV and two MPI_ISEND to self completed by one MPI_WAITALL of the four
! requests: the Fortran twin of waitall_loop.c, for bench/waitall_instructions.sh.
program waitall_loop
  use mpi
  implicit none
  integer :: ierr, i, n, reqs(4), stats(MPI_STATUS_SIZE, 4), outv(2), inv(2)
  character(len=32) :: arg
  call MPI_Init(ierr)
  n = 100000
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  outv = (/1, 2/)
  do i = 1, n
    call MPI_Irecv(inv(1), 1, MPI_INTEGER, 0, 1, MPI_COMM_SELF, reqs(1), ierr)
    call MPI_Irecv(inv(2), 1, MPI_INTEGER, 0, 2, MPI_COMM_SELF, reqs(2), ierr)
    call MPI_Isend(outv(1), 1, MPI_INTEGER, 0, 1, MPI_COMM_SELF, reqs(3), ierr)
    call MPI_Isend(outv(2), 1, MPI_INTEGER, 0, 2, MPI_COMM_SELF, reqs(4), ierr)
    call MPI_Waitall(4, reqs, stats, ierr)
  end do
  call MPI_Finalize(ierr)
end program waitall_loop
