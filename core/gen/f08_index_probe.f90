! Prints the index base this MPI's mpi_f08 binding returns from MPI_Waitany: 1 as the standard
! says, or 0 (MPICH 4.0.2's mpi_f08 binding, for Waitany, Waitsome, Testany and Testsome alike).
! Run at configure time so that the generated wrappers give the tools 0-based indices either way.
program f08_index_probe
  use mpi_f08
  implicit none
  integer :: idx, sendbuf, recvbuf
  type(MPI_Request) :: requests(2)
  call MPI_Init()
  sendbuf = 1
  requests(1) = MPI_REQUEST_NULL
  call MPI_Irecv(recvbuf, 1, MPI_INTEGER, 0, 1, MPI_COMM_SELF, requests(2))
  call MPI_Send(sendbuf, 1, MPI_INTEGER, 0, 1, MPI_COMM_SELF)
  call MPI_Waitany(2, requests, idx, MPI_STATUS_IGNORE)
  print '(A,I0)', 'f08-index-base=', idx - 1
  call MPI_Finalize()
end program f08_index_probe
