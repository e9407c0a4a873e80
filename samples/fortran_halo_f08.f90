! Sample: fortran_halo.f90 through the "use mpi_f08" bindings: the same decomposition, messages and results.
!
! Only the binding differs: handles are TYPE(MPI_Comm), TYPE(MPI_Request)..., statuses
! TYPE(MPI_Status), and ierror is left out; and one more call, MPI_GET_LIBRARY_VERSION, because
! MPICH 4.0's mpi_f08 returns the indices of MPI_WAITANY, WAITSOME, TESTANY and TESTSOME 0-based
! (pmodels/mpich#6270, fixed in 4.1), which a real code has to work around as this one does.
! The rest of this header is fortran_halo.f90's.
!
! Usage: mpiexec -n P fortran_halo_f08 [iterations [counts-prefix]]   (iterations defaults to 20)
!
! The decomposition and the messages are halo2d.c's, so that a tool's view of the two can be
! compared: each rank owns a 64x64 block of a global grid laid out by MPI_DIMS_CREATE on a
! non-periodic Cartesian communicator (no reordering), and every iteration posts the same four
! receives and four sends, in the same order, with the same tags (the direction of travel),
! edge ranks talking to MPI_PROC_NULL. Rows are contiguous and a column halo is one element of
! an MPI_TYPE_VECTOR, as in C: the grid is stored u(column, row).
!
! What differs is how the eight requests of an iteration are made and completed, by the iteration
! number modulo 8:
!   0 MPI_WAITALL           1 MPI_WAITANY loop    2 MPI_WAITSOME loop   3 MPI_TESTALL loop
!   4 MPI_TESTANY loop      5 MPI_TESTSOME loop   6 MPI_WAIT on each    (all on MPI_IRECV/MPI_ISEND)
!   7 MPI_STARTALL of the 8 persistent requests (MPI_RECV_INIT/MPI_SEND_INIT, made once before the
!     loop and freed with MPI_REQUEST_FREE after it), completed by MPI_WAITALL.
! The TEST loops overlap the exchange with the sweep of the cells that need no halo, one row per
! poll, then sleep 50 us between polls.
! After the sweep, an MPI_ALLREDUCE (MPI_MAX) gives the iteration's residual, as real codes check
! convergence every step.
!
! Exact MPI calls per rank (I = iterations, n(k) = iterations with it mod 8 == k, it = 0..I-1):
!   MPI_INIT 1, MPI_COMM_RANK 1, MPI_COMM_SIZE 1, MPI_DIMS_CREATE 1, MPI_CART_CREATE 1,
!   MPI_CART_COORDS 1, MPI_CART_SHIFT 2, MPI_TYPE_VECTOR 1, MPI_TYPE_COMMIT 1,
!   MPI_RECV_INIT 4, MPI_SEND_INIT 4, MPI_REQUEST_FREE 8,
!   MPI_IRECV 4*(I-n(7)), MPI_ISEND 4*(I-n(7)), MPI_STARTALL n(7), MPI_WAITALL n(0)+n(7),
!   MPI_WAIT 8*n(6), MPI_WAITANY 8*n(1) (one request per call),
!   MPI_WAITSOME, MPI_TESTALL, MPI_TESTANY, MPI_TESTSOME: as often as the polling took (at least
!     n(2), n(3), n(4), n(5)); with a counts-prefix each rank writes its own numbers of these five
!     routines to <counts-prefix>.<rank>.txt, one "MPI_Name count" a line,
!   MPI_ALLREDUCE I+1 (one per iteration, one for the checksum), MPI_TYPE_FREE 1, MPI_COMM_FREE 1,
!   MPI_FINALIZE 1.
! On P ranks laid out a x b, (a-1)*b*2 + a*(b-1)*2 messages travel per iteration, as in halo2d.c.
!
! The residual (a max) and the checksum (the sum of floor(u*2**20), an integer) are exact in any
! reduction order, so they depend only on P and I. Rank 0 recomputes the whole grid serially
! and requires both bit-identical, and every rank checks the source and tag of each completed
! receive and each returned index, so a tool that disturbed a message, a status or an index
! fails the run.
module halo_grid_f08
  use mpi_f08
  implicit none
  integer, parameter :: local_n = 64
  integer, parameter :: dp = kind(1.0d0)
  ! Tags name the direction of travel (as in halo2d.c) so a message can never match the wrong halo.
  integer, parameter :: to_up = 0, to_down = 1, to_left = 2, to_right = 3

  ! One rank's share of the grid and where its neighbours are. u and next are stored
  ! (column, row), 0 and n+1 being the halo, so that a row is contiguous as in the C sample.
  type grid_t
    integer :: rows = 0, cols = 0
    integer :: origin_row = 0, origin_col = 0
    integer :: up = MPI_PROC_NULL, down = MPI_PROC_NULL, left = MPI_PROC_NULL, right = MPI_PROC_NULL
    real(dp), allocatable :: u(:, :), next(:, :)
  end type grid_t

contains

  pure real(dp) function initial_value(global_row, global_col)
    integer, intent(in) :: global_row, global_col
    initial_value = real(mod(global_row * 7 + global_col * 13, 17), dp) / 16.0_dp
  end function initial_value

  ! Fills interior cells from their global position and the boundary with fixed values (1.0 along
  ! the global top edge, 0.0 elsewhere); both buffers get it because the sweep writes interior only.
  subroutine fill_grid(u, rows, cols, origin_row, origin_col, top_is_global_edge)
    real(dp), intent(out) :: u(0:, 0:)
    integer, intent(in) :: rows, cols, origin_row, origin_col
    logical, intent(in) :: top_is_global_edge
    integer :: i, j
    u = 0.0_dp
    do i = 1, rows
      do j = 1, cols
        u(j, i) = initial_value(origin_row + i - 1, origin_col + j - 1)
      end do
    end do
    if (top_is_global_edge) u(1:cols, 0) = 1.0_dp
  end subroutine fill_grid

  ! One sweep from u to next over rows i0..i1 and columns j0..j1; returns the largest change. The
  ! sum is parenthesised in halo2d.c's order so that both programs round identically, and a cell's
  ! new value depends only on u, so sweeping the block in pieces gives the same values.
  real(dp) function sweep(u, next, i0, i1, j0, j1) result(largest)
    real(dp), intent(in) :: u(0:, 0:)
    real(dp), intent(inout) :: next(0:, 0:)
    integer, intent(in) :: i0, i1, j0, j1
    integer :: i, j
    real(dp) :: value
    largest = 0.0_dp
    do i = i0, i1
      do j = j0, j1
        value = 0.25_dp * (((u(j, i - 1) + u(j, i + 1)) + u(j - 1, i)) + u(j + 1, i))
        largest = max(largest, abs(value - u(j, i)))
        next(j, i) = value
      end do
    end do
  end function sweep

  ! The checksum of the interior: the sum of floor(u*2**20), an integer below 2**53 (held as a
  ! double so that both reductions reduce doubles), hence exact in any order.
  real(dp) function checksum(u, rows, cols)
    real(dp), intent(in) :: u(0:, 0:)
    integer, intent(in) :: rows, cols
    checksum = real(sum(floor(u(1:cols, 1:rows) * 2.0_dp**20, kind=8)), dp)
  end function checksum

  ! The serial reference: the whole grid, the same sweeps; its last residual and checksum.
  subroutine serial_reference(global_rows, global_cols, iterations, residual, total)
    integer, intent(in) :: global_rows, global_cols, iterations
    real(dp), intent(out) :: residual
    real(dp), intent(out) :: total
    real(dp), allocatable :: u(:, :), next(:, :)
    integer :: it
    allocate(u(0:global_cols + 1, 0:global_rows + 1), next(0:global_cols + 1, 0:global_rows + 1))
    call fill_grid(u, global_rows, global_cols, 0, 0, .true.)
    call fill_grid(next, global_rows, global_cols, 0, 0, .true.)
    residual = 0.0_dp
    do it = 1, iterations
      residual = sweep(u, next, 1, global_rows, 1, global_cols)
      u(1:global_cols, 1:global_rows) = next(1:global_cols, 1:global_rows)
    end do
    total = checksum(u, global_rows, global_cols)
  end subroutine serial_reference
end module halo_grid_f08

program fortran_halo_f08
  use mpi_f08
  use halo_grid_f08
  use, intrinsic :: iso_fortran_env, only: error_unit
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
  interface
    integer(c_int) function usleep(microseconds) bind(c, name='usleep')
      import :: c_int
      integer(c_int), value :: microseconds
    end function usleep
  end interface
  ! The grid is the buffer of nonblocking and persistent calls: ASYNCHRONOUS keeps the compiler
  ! from moving its reads and writes across the calls that complete them.
  type(grid_t), target, asynchronous :: g
  integer :: ierr, rank, nranks, iterations, it, mode, k, index, outcount, remaining, next_row
  ! What to add to an index MPI returned to make it 1-based (1 on MPICH 4.0, else 0).
  integer :: index_shift, version_length
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
  type(MPI_Comm) :: cart
  type(MPI_Datatype) :: column
  integer :: dims(2), coords(2)
  logical :: periods(2), flag, ok
  type(MPI_Request) :: requests(8), persistent(8)
  integer :: indices(8)
  type(MPI_Status) :: statuses(8), status
  ! Calls of the five routines whose number depends on timing, for the counts file.
  integer :: n_waitsome = 0, n_testall = 0, n_testany = 0, n_testsome = 0, n_waitany = 0
  real(dp) :: local_residual, residual, expected_residual
  real(dp) :: local_sum, total, expected_total
  character(len=256) :: arg, counts_prefix

  call MPI_INIT()
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks)
  call MPI_GET_LIBRARY_VERSION(version, version_length)
  ! "MPICH Version:<tab>4.0.2...": the first digit starts the version.
  index_shift = 0
  k = scan(version, '0123456789')
  if (version(1:14) == 'MPICH Version:' .and. k > 0) then
    if (version(k:k + 3) == '4.0.') index_shift = 1
  end if

  iterations = 20
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read(arg, *, iostat=ierr) iterations
    if (ierr /= 0) iterations = 0
  end if
  counts_prefix = ''
  if (command_argument_count() >= 2) call get_command_argument(2, counts_prefix)
  if (iterations < 1) then
    if (rank == 0) write(error_unit, '(a)') 'fortran_halo_f08: iterations must be >= 1'
    call MPI_FINALIZE()
    stop 1
  end if

  dims = 0
  periods = .false.
  call MPI_DIMS_CREATE(nranks, 2, dims)
  ! No reordering keeps rank 0 of the grid equal to world rank 0, which prints.
  call MPI_CART_CREATE(MPI_COMM_WORLD, 2, dims, periods, .false., cart)
  call MPI_CART_COORDS(cart, rank, 2, coords)
  call MPI_CART_SHIFT(cart, 0, 1, g%up, g%down)
  call MPI_CART_SHIFT(cart, 1, 1, g%left, g%right)

  g%rows = local_n
  g%cols = local_n
  g%origin_row = coords(1) * local_n
  g%origin_col = coords(2) * local_n
  allocate(g%u(0:local_n + 1, 0:local_n + 1), g%next(0:local_n + 1, 0:local_n + 1))
  call fill_grid(g%u, g%rows, g%cols, g%origin_row, g%origin_col, g%up == MPI_PROC_NULL)
  call fill_grid(g%next, g%rows, g%cols, g%origin_row, g%origin_col, g%up == MPI_PROC_NULL)

  ! A column of the block: local_n doubles, one per row, a row (local_n+2 doubles) apart.
  call MPI_TYPE_VECTOR(local_n, 1, local_n + 2, MPI_DOUBLE_PRECISION, column)
  call MPI_TYPE_COMMIT(column)

  ! The persistent exchange is bound to g%u's addresses, which is why the sweep copies next
  ! back into u instead of swapping the buffers as halo2d.c does (same values either way).
  call MPI_RECV_INIT(g%u(1, 0), local_n, MPI_DOUBLE_PRECISION, g%up, to_down, cart, persistent(1))
  call MPI_RECV_INIT(g%u(1, local_n + 1), local_n, MPI_DOUBLE_PRECISION, g%down, to_up, cart, persistent(2))
  call MPI_RECV_INIT(g%u(0, 1), 1, column, g%left, to_right, cart, persistent(3))
  call MPI_RECV_INIT(g%u(local_n + 1, 1), 1, column, g%right, to_left, cart, persistent(4))
  call MPI_SEND_INIT(g%u(1, 1), local_n, MPI_DOUBLE_PRECISION, g%up, to_up, cart, persistent(5))
  call MPI_SEND_INIT(g%u(1, local_n), local_n, MPI_DOUBLE_PRECISION, g%down, to_down, cart, persistent(6))
  call MPI_SEND_INIT(g%u(1, 1), 1, column, g%left, to_left, cart, persistent(7))
  call MPI_SEND_INIT(g%u(local_n, 1), 1, column, g%right, to_right, cart, persistent(8))

  ok = .true.
  residual = 0.0_dp
  do it = 0, iterations - 1
    mode = mod(it, 8)
    local_residual = 0.0_dp
    next_row = 2
    if (mode == 7) then
      requests = persistent
      call MPI_STARTALL(8, requests)
    else
      call MPI_IRECV(g%u(1, 0), local_n, MPI_DOUBLE_PRECISION, g%up, to_down, cart, requests(1))
      call MPI_IRECV(g%u(1, local_n + 1), local_n, MPI_DOUBLE_PRECISION, g%down, to_up, cart, requests(2))
      call MPI_IRECV(g%u(0, 1), 1, column, g%left, to_right, cart, requests(3))
      call MPI_IRECV(g%u(local_n + 1, 1), 1, column, g%right, to_left, cart, requests(4))
      call MPI_ISEND(g%u(1, 1), local_n, MPI_DOUBLE_PRECISION, g%up, to_up, cart, requests(5))
      call MPI_ISEND(g%u(1, local_n), local_n, MPI_DOUBLE_PRECISION, g%down, to_down, cart, requests(6))
      call MPI_ISEND(g%u(1, 1), 1, column, g%left, to_left, cart, requests(7))
      call MPI_ISEND(g%u(local_n, 1), 1, column, g%right, to_right, cart, requests(8))
    end if

    select case (mode)
    case (0, 7)
      call MPI_WAITALL(8, requests, statuses)
      do k = 1, 4
        call check_receive(k, statuses(k))
      end do
    case (1)
      do k = 1, 8
        call MPI_WAITANY(8, requests, index, status)
        index = index + index_shift
        n_waitany = n_waitany + 1
        call check_index(index)
        if (index >= 1 .and. index <= 4) call check_receive(index, status)
      end do
    case (2)
      remaining = 8
      do while (remaining > 0)
        call MPI_WAITSOME(8, requests, outcount, indices, statuses)
        n_waitsome = n_waitsome + 1
        call check_some(outcount)
      end do
    case (3)
      flag = .false.
      do while (.not. flag)
        call overlap_one_row()
        call MPI_TESTALL(8, requests, flag, statuses)
        n_testall = n_testall + 1
      end do
      do k = 1, 4
        call check_receive(k, statuses(k))
      end do
    case (4)
      remaining = 8
      do while (remaining > 0)
        call overlap_one_row()
        call MPI_TESTANY(8, requests, index, flag, status)
        if (flag .and. index /= MPI_UNDEFINED) index = index + index_shift
        n_testany = n_testany + 1
        if (flag) then
          call check_index(index)
          remaining = remaining - 1
          if (index >= 1 .and. index <= 4) call check_receive(index, status)
        end if
      end do
    case (5)
      remaining = 8
      do while (remaining > 0)
        call overlap_one_row()
        call MPI_TESTSOME(8, requests, outcount, indices, statuses)
        n_testsome = n_testsome + 1
        call check_some(outcount)
      end do
    case (6)
      do k = 1, 8
        call MPI_WAIT(requests(k), status)
        if (k <= 4) call check_receive(k, status)
      end do
    end select
    ! Every completion routine sets the requests it completed to MPI_REQUEST_NULL, except that a
    ! persistent request stays allocated (and inactive) until it is freed.
    if (mode /= 7 .and. any(requests /= MPI_REQUEST_NULL)) then
      write(error_unit, '(a,i0,a,i0)') 'fortran_halo_f08: rank ', rank, ' has live requests after iteration ', it
      ok = .false.
    end if

    ! The rest of the interior (all of it unless a TEST loop overlapped it), then the cells
    ! next to the halo, which needed the exchange.
    do while (next_row < g%rows)
      call overlap_one_row()
    end do
    local_residual = max(local_residual, sweep(g%u, g%next, 1, 1, 1, g%cols), &
                         sweep(g%u, g%next, g%rows, g%rows, 1, g%cols), &
                         sweep(g%u, g%next, 2, g%rows - 1, 1, 1), &
                         sweep(g%u, g%next, 2, g%rows - 1, g%cols, g%cols))
    g%u(1:g%cols, 1:g%rows) = g%next(1:g%cols, 1:g%rows)
    call MPI_ALLREDUCE(local_residual, residual, 1, MPI_DOUBLE_PRECISION, MPI_MAX, cart)
  end do

  do k = 1, 8
    call MPI_REQUEST_FREE(persistent(k))
  end do

  local_sum = checksum(g%u, g%rows, g%cols)
  call MPI_ALLREDUCE(local_sum, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, cart)

  if (rank == 0) then
    call serial_reference(dims(1) * local_n, dims(2) * local_n, iterations, expected_residual, expected_total)
    if (residual /= expected_residual .or. total /= expected_total) then
      write(error_unit, '(a,es24.17,a,i0,a,es24.17,a,i0)') 'fortran_halo_f08: residual ', residual, ' checksum ', nint(total, 8), &
        ' differ from the serial reference ', expected_residual, ' ', nint(expected_total, 8)
      ok = .false.
    end if
    write(*, '(a,i0,a,i0,a,es12.6,a,i0)') 'fortran_halo_f08: ranks=', nranks, ' iterations=', iterations, &
      ' residual=', residual, ' checksum=', nint(total, 8)
  end if

  if (len_trim(counts_prefix) > 0) call write_counts()

  call MPI_TYPE_FREE(column)
  call MPI_COMM_FREE(cart)
  call MPI_FINALIZE()
  if (.not. ok) stop 1

contains

  ! A completed receive k (1 up, 2 down, 3 left, 4 right) came from that neighbour with the tag
  ! of the opposite direction of travel. A receive from MPI_PROC_NULL is not checked: MPICH 4.0
  ! returns source 0 or MPI_ANY_SOURCE for it, depending on the kind of request.
  subroutine check_receive(k, st)
    integer, intent(in) :: k
    type(MPI_Status), intent(in) :: st
    integer :: peers(4), tags(4)
    peers = [g%up, g%down, g%left, g%right]
    tags = [to_down, to_up, to_right, to_left]
    if (peers(k) == MPI_PROC_NULL) return
    if (st%MPI_SOURCE /= peers(k) .or. st%MPI_TAG /= tags(k)) then
      write(error_unit, '(a,i0,a,i0,a,i0,a,i0,a,i0,a,i0)') 'fortran_halo_f08: rank ', rank, ' iteration ', it, &
        ' receive ', k, ' has source ', st%MPI_SOURCE, ' tag ', st%MPI_TAG, ' expected source ', peers(k)
      ok = .false.
    end if
  end subroutine check_receive

  ! Sweeps the next row of the cells that need no halo, as a real code overlaps computation with
  ! communication, so the TEST loops poll once per row; with no row left it sleeps 50 us instead,
  ! because a spinning rank takes the core of the rank it waits for when ranks outnumber cores
  ! (and a log of 100,000 polls is no test of anything).
  subroutine overlap_one_row()
    integer(c_int) :: rc
    if (next_row >= g%rows) then
      rc = usleep(50_c_int)
      return
    end if
    local_residual = max(local_residual, sweep(g%u, g%next, next_row, next_row, 2, g%cols - 1))
    next_row = next_row + 1
  end subroutine overlap_one_row

  subroutine check_index(i)
    integer, intent(in) :: i
    if (i < 1 .or. i > 8) then
      write(error_unit, '(a,i0,a,i0,a,i0)') 'fortran_halo_f08: rank ', rank, ' iteration ', it, ' completed index ', i
      ok = .false.
      remaining = 0
    end if
  end subroutine check_index

  ! The indices a WAITSOME or TESTSOME returned: 1-based, each receive's status in its slot.
  subroutine check_some(count)
    integer, intent(in) :: count
    integer :: m
    if (count == MPI_UNDEFINED .or. count < 0 .or. count > remaining) then
      write(error_unit, '(a,i0,a,i0,a,i0)') 'fortran_halo_f08: rank ', rank, ' iteration ', it, ' outcount ', count
      ok = .false.
      remaining = 0
      return
    end if
    indices(1:count) = indices(1:count) + index_shift
    do m = 1, count
      call check_index(indices(m))
      if (indices(m) >= 1 .and. indices(m) <= 4) call check_receive(indices(m), statuses(m))
    end do
    remaining = remaining - count
  end subroutine check_some

  subroutine write_counts()
    character(len=300) :: path
    integer :: unit
    write(path, '(a,a,i0,a)') trim(counts_prefix), '.', rank, '.txt'
    open(newunit=unit, file=trim(path), status='replace', action='write')
    write(unit, '(a,i0)') 'MPI_Waitany ', n_waitany
    write(unit, '(a,i0)') 'MPI_Waitsome ', n_waitsome
    write(unit, '(a,i0)') 'MPI_Testall ', n_testall
    write(unit, '(a,i0)') 'MPI_Testany ', n_testany
    write(unit, '(a,i0)') 'MPI_Testsome ', n_testsome
    close(unit)
  end subroutine write_counts
end program fortran_halo_f08
