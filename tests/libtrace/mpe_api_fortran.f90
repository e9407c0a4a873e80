! Test program: MPE's user API from Fortran, as an MPE-instrumented Fortran program calls it.
! Every rank logs 4 "fcompute" states (orange) and 1 "ftick" event; rank 0 logs one
! mpe_log_send to rank 1, which logs the matching mpe_log_receive.
program mpe_api_fortran
  use mpi
  implicit none
  integer :: ierr, rank, nranks, cs, ce, tick, i, k
  double precision :: x
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call mpe_init_log(ierr)
  call mpe_log_get_state_eventids(cs, ce, ierr)
  call mpe_log_get_solo_eventid(tick, ierr)
  call mpe_describe_state(cs, ce, 'fcompute', 'orange', ierr)
  call mpe_describe_event(tick, 'ftick', 'blue', ierr)
  x = 0
  do i = 1, 4
    call mpe_log_event(cs, i, '', ierr)
    do k = 1, 10000
      x = x + k
    end do
    call mpe_log_event(ce, i, '', ierr)
  end do
  call mpe_log_event(tick, 0, 'ft', ierr)
  if (nranks > 1 .and. rank == 0) call mpe_log_send(1, 5, 16, ierr)
  if (nranks > 1 .and. rank == 1) call mpe_log_receive(0, 5, 16, ierr)
  call mpe_finish_log('fapitest', ierr)
  call MPI_Finalize(ierr)
  if (rank == 0) print '(a, f0.0)', 'mpe_api_fortran done ', x
end program mpe_api_fortran
