! Sample: a token ring in Fortran through the "use mpi" bindings (not mpi_f08).
!
! Usage: mpiexec -n P fortran_ring   (P >= 2)
!
! Exact MPI calls made by EVERY rank:
!   MPI_INIT 1, MPI_COMM_RANK 1, MPI_COMM_SIZE 1,
!   MPI_SEND 10, MPI_RECV 10, MPI_ALLREDUCE 1, MPI_BARRIER 1, MPI_FINALIZE 1.
! Each rank sends one MPI_INTEGER (tag 0) to mod(rank+1,P) and receives from
! mod(rank-1+P,P) on MPI_COMM_WORLD; every rank adds 1 to the token per lap,
! so rank 0 ends with token = 10*P. MPI_ALLREDUCE sums rank+1 over all ranks,
! giving sum = P*(P+1)/2.
program fortran_ring
  use mpi
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  integer, parameter :: laps = 10
  integer :: ierr, rank, nranks, next, prev, lap, token, contribution, total
  integer :: status(MPI_STATUS_SIZE)
  logical :: ok

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)

  if (nranks < 2) then
    if (rank == 0) write(error_unit, '(a)') 'fortran_ring: needs at least 2 ranks'
    call MPI_FINALIZE(ierr)
    stop 1
  end if

  next = mod(rank + 1, nranks)
  prev = mod(rank - 1 + nranks, nranks)
  token = 0
  ok = .true.

  do lap = 0, laps - 1
    if (rank == 0) then
      token = token + 1
      call MPI_SEND(token, 1, MPI_INTEGER, next, 0, MPI_COMM_WORLD, ierr)
      call MPI_RECV(token, 1, MPI_INTEGER, prev, 0, MPI_COMM_WORLD, status, ierr)
    else
      call MPI_RECV(token, 1, MPI_INTEGER, prev, 0, MPI_COMM_WORLD, status, ierr)
      ! Ranks 0..rank-1 have added 1 in this lap, and every rank once per earlier lap.
      if (token /= lap * nranks + rank) ok = .false.
      token = token + 1
      call MPI_SEND(token, 1, MPI_INTEGER, next, 0, MPI_COMM_WORLD, ierr)
    end if
  end do

  contribution = rank + 1
  call MPI_ALLREDUCE(contribution, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= nranks * (nranks + 1) / 2) ok = .false.

  call MPI_BARRIER(MPI_COMM_WORLD, ierr)

  if (rank == 0) then
    if (token /= laps * nranks) ok = .false.
    write(*, '(a,i0,a,i0,a,i0,a,i0)') 'fortran_ring: ranks=', nranks, ' laps=', laps, &
      ' token=', token, ' sum=', total
  end if
  if (.not. ok) write(error_unit, '(a,i0,a)') 'fortran_ring: rank ', rank, ' saw a wrong value'

  call MPI_FINALIZE(ierr)
  if (.not. ok) stop 1
end program fortran_ring
