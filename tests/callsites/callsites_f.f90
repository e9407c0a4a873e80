! The Fortran twin of callsites.c: MPI_SEND and MPI_RECV from two lines each, with known counts.
!   send_small_f  MPI_SEND  2 calls, 10 integers = 40 bytes      recv_small_f  MPI_RECV  2 calls
!   send_large_f  MPI_SEND  4 calls, 50 integers = 200 bytes     recv_large_f  MPI_RECV  4 calls
program callsites_f
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, peer, i
  integer :: small(10), large(50)
  integer :: status(MPI_STATUS_SIZE)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  small = 0
  large = 0
  if (mod(rank, 2) == 0) then
    peer = rank + 1
  else
    peer = rank - 1
  end if
  if (peer < nprocs) then
    if (mod(rank, 2) == 0) then
      do i = 1, 2
        call MPI_SEND(small, 10, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, ierr) ! SITE:send_small_f
      end do
      do i = 1, 4
        call MPI_SEND(large, 50, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, ierr) ! SITE:send_large_f
      end do
    else
      do i = 1, 2
        call MPI_RECV(small, 10, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, status, ierr) ! SITE:recv_small_f
      end do
      do i = 1, 4
        call MPI_RECV(large, 50, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, status, ierr) ! SITE:recv_large_f
      end do
    end if
  end if
  call MPI_FINALIZE(ierr)
end program callsites_f
