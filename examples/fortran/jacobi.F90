! A 2-D Jacobi sweep in Fortran over MPI, three ways (docs/intercept.md and docs/omp.md,
! "Fortran"):
!   plain   the halo exchange in plain MPI (MPI_Irecv, MPI_Isend, MPI_Waitall, MPI_Sendrecv);
!   tasks   the same plain MPI calls inside hytask tasks (module hytask_tasks), beside the
!           interior's update: the interception library makes the blocking ones suspend
!           only their task;
!   detach  OpenMP tasks: `!$omp task detach(ev)` posts the exchange and hands the requests
!           to hytask (module hytask_omp), whose progress fulfils the event;
!   commtask  fork-join: the master posts the exchange and hands it to a hytask_commtask,
!           the team updates the interior meanwhile, hytask_commtask_finalize waits.
! Every rank also runs the whole grid serially and compares its columns with it: the
! result must be the same to the last bit. Prints "jacobi <mode>: ok" when every rank agrees.
!
! Built with one of the three MPI bindings: -DHYTASK_BINDING=1 (include 'mpif.h'), 2 (use
! mpi) or 3 (use mpi_f08). Usage: jacobi <plain|tasks|detach|commtask> [n] [iterations]
module jacobi_grid
#if HYTASK_BINDING == 2
  use mpi
#elif HYTASK_BINDING == 3
  use mpi_f08
#endif
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
#if HYTASK_BINDING == 1
  include 'mpif.h'
#endif
#if HYTASK_BINDING == 3
  type(MPI_Comm) :: comm
#else
  integer :: comm
#endif
  integer :: rank, nranks, n, nloc, first, left, right, blocks
  ! u(0:n+1, 0:nloc+1): this rank's columns first..first+nloc-1 of the n x n interior, with
  ! the fixed boundary rows 0 and n+1 and a halo column on each side.
  double precision, allocatable :: u(:,:), unew(:,:)
  double precision :: residual
  integer :: iteration
contains

  ! The boundary: 1 along the first row, 0 elsewhere (global column j in 0..n+1).
  double precision function boundary(i, j)
    integer, intent(in) :: i, j
    boundary = 0d0
    if (i == 0 .and. j >= 1 .and. j <= n) boundary = 1d0
  end function

  subroutine update_columns(j0, j1)
    integer, intent(in) :: j0, j1
    integer :: i, j
    do j = j0, j1
      do i = 1, n
        unew(i, j) = 0.25d0 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1))
      end do
    end do
  end subroutine

  ! The halo exchange with the left and right neighbours (MPI_PROC_NULL at the ends), with
  ! MPI_Sendrecv (how = 1) or MPI_Irecv, MPI_Isend and MPI_Waitall (how = 0).
  subroutine exchange(how)
    integer, intent(in) :: how
#if HYTASK_BINDING == 3
    type(MPI_Request) :: r(4)
    type(MPI_Status) :: st
#else
    integer :: r(4), st(MPI_STATUS_SIZE)
#endif
    integer :: ierr
    if (how == 1) then
      call MPI_Sendrecv(u(0, nloc), n + 2, MPI_DOUBLE_PRECISION, right, 1, &
                        u(0, 0), n + 2, MPI_DOUBLE_PRECISION, left, 1, comm, st, ierr)
      ! The status came back. (Not checked from MPI_PROC_NULL: MPICH 4.0 reports source 0
      ! for a non-blocking receive from it, as hytask posts one inside a task.)
#if HYTASK_BINDING == 3
      if (left /= MPI_PROC_NULL .and. st%MPI_SOURCE /= left) &
        error stop "jacobi: MPI_Sendrecv's status names another source"
#else
      if (left /= MPI_PROC_NULL .and. st(MPI_SOURCE) /= left) &
        error stop "jacobi: MPI_Sendrecv's status names another source"
#endif
      call MPI_Sendrecv(u(0, 1), n + 2, MPI_DOUBLE_PRECISION, left, 2, &
                        u(0, nloc + 1), n + 2, MPI_DOUBLE_PRECISION, right, 2, comm, &
                        MPI_STATUS_IGNORE, ierr)
    else
      call MPI_Irecv(u(0, 0), n + 2, MPI_DOUBLE_PRECISION, left, 3, comm, r(1), ierr)
      call MPI_Irecv(u(0, nloc + 1), n + 2, MPI_DOUBLE_PRECISION, right, 4, comm, r(2), ierr)
      call MPI_Isend(u(0, nloc), n + 2, MPI_DOUBLE_PRECISION, right, 3, comm, r(3), ierr)
      call MPI_Isend(u(0, 1), n + 2, MPI_DOUBLE_PRECISION, left, 4, comm, r(4), ierr)
#if HYTASK_BINDING == 3
      ierr = MPI_SUCCESS
      call MPI_Waitall(4, r, MPI_STATUSES_IGNORE)  ! mpi_f08's ierror is optional
#else
      call MPI_Waitall(4, r, MPI_STATUSES_IGNORE, ierr)
#endif
    end if
    if (ierr /= MPI_SUCCESS) error stop "jacobi: the halo exchange failed"
  end subroutine

  ! The sum of squared changes of this sweep, over every rank.
  subroutine reduce_residual()
    integer :: ierr
    residual = sum((unew(1:n, 1:nloc) - u(1:n, 1:nloc))**2)
    call MPI_Allreduce(MPI_IN_PLACE, residual, 1, MPI_DOUBLE_PRECISION, MPI_SUM, comm, ierr)
  end subroutine

  ! Task bodies (hytask_tasks): the exchange, a block of interior columns, the residual.
  subroutine exchange_task(how) bind(c)
    integer(c_int), value :: how
    call exchange(how)
  end subroutine

  subroutine interior_task(b) bind(c)
    integer(c_int), value :: b
    integer :: j0, j1
    ! Columns 2..nloc-1 need no halo; block b of `blocks`.
    j0 = 2 + (b * (nloc - 2)) / blocks
    j1 = 1 + ((b + 1) * (nloc - 2)) / blocks
    call update_columns(j0, j1)
  end subroutine

  subroutine residual_task(with_barrier) bind(c)
    integer(c_int), value :: with_barrier
    integer :: ierr
    call reduce_residual()
#if HYTASK_BINDING == 3
    if (with_barrier /= 0) call MPI_Barrier(comm)
    ierr = MPI_SUCCESS
#else
    if (with_barrier /= 0) call MPI_Barrier(comm, ierr)
#endif
    if (ierr /= MPI_SUCCESS) error stop "jacobi: MPI_Barrier failed"
  end subroutine

end module jacobi_grid

program jacobi
  use jacobi_grid
  use hytask_tasks
  use hytask_omp
  use omp_lib
  use, intrinsic :: iso_c_binding, only: c_int64_t
  implicit none
  character(len=16) :: mode, arg
  integer :: ierr, provided, iterations, i, j, b, bad, all_bad
  integer(c_int64_t) :: counts(3), least(3), fulfilled
  integer(omp_event_handle_kind) :: ev_left, ev_right
  integer :: rq(2)
  type(hytask_commtask) :: from_left, from_right
  integer :: early = 0
#if HYTASK_BINDING == 3
  type(MPI_Request) :: req(2)
#else
  integer :: req(2)
#endif
  double precision, allocatable :: serial(:,:), serial_new(:,:)
  double precision :: serial_residual

  mode = "plain"
  n = 48
  iterations = 40
  if (command_argument_count() >= 1) call get_command_argument(1, mode)
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) n
  end if
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg)
    read (arg, *) iterations
  end if
  if (mode /= "plain" .and. mode /= "tasks" .and. mode /= "detach" .and. mode /= "commtask") then
    print '(a)', "usage: jacobi <plain|tasks|detach|commtask> [n] [iterations]"
    stop 2
  end if

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  if (provided < MPI_THREAD_MULTIPLE) error stop "jacobi: MPI_THREAD_MULTIPLE is not available"
  comm = MPI_COMM_WORLD
  call MPI_Comm_rank(comm, rank, ierr)
  call MPI_Comm_size(comm, nranks, ierr)
  ! Columns split as evenly as possible; at least 3 per rank.
  nloc = n / nranks
  first = rank * nloc + 1 + min(rank, mod(n, nranks))
  if (rank < mod(n, nranks)) nloc = nloc + 1
  if (nloc < 3) error stop "jacobi: n must give every rank at least 3 columns"
  left = rank - 1
  right = rank + 1
  if (rank == 0) left = MPI_PROC_NULL
  if (rank == nranks - 1) right = MPI_PROC_NULL
  blocks = 4

  allocate (u(0:n + 1, 0:nloc + 1), unew(0:n + 1, 0:nloc + 1))
  do j = 0, nloc + 1
    do i = 0, n + 1
      u(i, j) = boundary(i, first - 1 + j)
    end do
  end do
  unew = u

  if (mode == "tasks") call hytask_start()
  if (mode == "detach" .or. mode == "commtask") call hytask_session_start()

  do iteration = 1, iterations
    select case (mode)
    case ("plain")
      call exchange(mod(iteration, 2))
      call update_columns(1, nloc)
    case ("tasks")
      ! The exchange and the interior at once; the two edge columns once the halo is in.
      call hytask_spawn(exchange_task, mod(iteration, 2))
      do b = 0, blocks - 1
        call hytask_spawn(interior_task, b)
      end do
      call hytask_wait_all()
      call update_columns(1, 1)
      call update_columns(nloc, nloc)
    case ("detach")
      !$omp parallel num_threads(2) default(shared) private(b)
      !$omp single
      ! Receive the left halo column, send the right edge (and the mirror image): each
      ! task's event is fulfilled by hytask once both of its requests have completed.
      !$omp task detach(ev_left) depend(out: u(0, 0)) private(rq, req, ierr)
      call MPI_Irecv(u(0, 0), n + 2, MPI_DOUBLE_PRECISION, left, 5, comm, req(1), ierr)
      call MPI_Isend(u(0, nloc), n + 2, MPI_DOUBLE_PRECISION, right, 5, comm, req(2), ierr)
#if HYTASK_BINDING == 3
      rq = req%MPI_VAL
#else
      rq = req
#endif
      call hytask_fulfill_when(ev_left, rq)
      !$omp end task
      !$omp task detach(ev_right) depend(out: u(0, nloc + 1)) private(rq, req, ierr)
      call MPI_Irecv(u(0, nloc + 1), n + 2, MPI_DOUBLE_PRECISION, right, 6, comm, req(1), ierr)
      call MPI_Isend(u(0, 1), n + 2, MPI_DOUBLE_PRECISION, left, 6, comm, req(2), ierr)
#if HYTASK_BINDING == 3
      rq = req%MPI_VAL
#else
      rq = req
#endif
      call hytask_fulfill_when(ev_right, rq)
      !$omp end task
      do b = 0, blocks - 1
        !$omp task firstprivate(b)
        call interior_task(b)
        !$omp end task
      end do
      !$omp task depend(in: u(0, 0))
      call update_columns(1, 1)
      !$omp end task
      !$omp task depend(in: u(0, nloc + 1))
      call update_columns(nloc, nloc)
      !$omp end task
      !$omp taskwait
      !$omp end single
      !$omp end parallel
    case ("commtask")
      call MPI_Irecv(u(0, 0), n + 2, MPI_DOUBLE_PRECISION, left, 7, comm, req(1), ierr)
      call MPI_Isend(u(0, nloc), n + 2, MPI_DOUBLE_PRECISION, right, 7, comm, req(2), ierr)
#if HYTASK_BINDING == 3
      rq = req%MPI_VAL
#else
      rq = req
#endif
      call hytask_commtask_add(from_left, rq)
      call MPI_Irecv(u(0, nloc + 1), n + 2, MPI_DOUBLE_PRECISION, right, 8, comm, req(1), ierr)
      call MPI_Isend(u(0, 1), n + 2, MPI_DOUBLE_PRECISION, left, 8, comm, req(2), ierr)
#if HYTASK_BINDING == 3
      rq = req%MPI_VAL
#else
      rq = req
#endif
      call hytask_commtask_add(from_right, rq)
      !$omp parallel do num_threads(2) schedule(static)
      do b = 0, blocks - 1
        call interior_task(b)
      end do
      !$omp end parallel do
      ! Whether hytask's progress completed them while the team computed (done: no poll).
      if (hytask_commtask_done(from_left)) early = early + 1
      if (hytask_commtask_test(from_right)) early = early + 1
      call hytask_commtask_finalize(from_left)
      call update_columns(1, 1)
      call hytask_commtask_finalize(from_right)
      call update_columns(nloc, nloc)
    end select
    if (mod(iteration, 10) == 0 .or. iteration == iterations) then
      if (mode == "tasks") then
        call hytask_spawn(residual_task, 1)
        call hytask_wait_all()
      else
        call reduce_residual()
      end if
    end if
    u(1:n, 1:nloc) = unew(1:n, 1:nloc)
  end do

  ! The serial reference, on every rank: the same sweeps over the whole grid.
  allocate (serial(0:n + 1, 0:n + 1), serial_new(0:n + 1, 0:n + 1))
  do j = 0, n + 1
    do i = 0, n + 1
      serial(i, j) = boundary(i, j)
    end do
  end do
  serial_new = serial
  serial_residual = 0d0
  do iteration = 1, iterations
    do j = 1, n
      do i = 1, n
        serial_new(i, j) = 0.25d0 * (serial(i - 1, j) + serial(i + 1, j) + serial(i, j - 1) + &
                                     serial(i, j + 1))
      end do
    end do
    if (iteration == iterations) serial_residual = sum((serial_new(1:n, 1:n) - serial(1:n, 1:n))**2)
    serial(1:n, 1:n) = serial_new(1:n, 1:n)
  end do
  bad = count(u(1:n, 1:nloc) /= serial(1:n, first:first + nloc - 1))
  if (abs(residual - serial_residual) > 1d-12 * serial_residual) bad = bad + 1
  call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, comm, ierr)

  ! The interception library's counters (every mode links it), smallest over the ranks.
  call hytask_intercept_counters(counts(1), counts(2), counts(3))
  call MPI_Allreduce(counts, least, 3, MPI_INTEGER8, MPI_MIN, comm, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0)', "least over the ranks: intercepted in tasks ", &
    least(1), ", Fortran calls ", least(2), ", of which in tasks ", least(3)
  if (mode == "tasks") call hytask_stop()
  if (mode == "commtask") then
    if (rank == 0) print '(a,i0,a,i0)', "rank 0: exchanges complete before finalize ", early, &
      " of ", 2 * iterations
    call hytask_commtask_free(from_left)
    call hytask_commtask_free(from_right)
    call hytask_session_end()
  end if
  if (mode == "detach") then
    fulfilled = hytask_omp_fulfilled()
    call MPI_Allreduce(fulfilled, least(1), 1, MPI_INTEGER8, MPI_MIN, comm, ierr)
    if (rank == 0) print '(a,i0)', "least over the ranks: events fulfilled by hytask ", least(1)
    call hytask_session_end()
  end if
  if (rank == 0) print '(a,es12.5,a,es12.5)', "residual ", residual, " serial ", serial_residual
  if (all_bad /= 0) then
    if (rank == 0) print '(a,a,a,i0,a)', "jacobi ", trim(mode), ": FAILED (", all_bad, &
      " values differ from the serial sweep)"
    call MPI_Finalize(ierr)
    error stop 1
  end if
  if (rank == 0) print '(a,a,a)', "jacobi ", trim(mode), ": ok"
  call MPI_Finalize(ierr)
end program jacobi
