! Misuse of the Fortran modules: each gives hytask's message naming the fix, and an ierr
! (or, without one, an error stop), never a hang or a crash. Usage: misuse <case>
module misuse_body
  use mpi
  use, intrinsic :: iso_c_binding, only: c_int
  implicit none
contains
  subroutine body(arg) bind(c)
    integer(c_int), value :: arg
    if (arg < 0) print *, arg
  end subroutine

  ! Rank 0 sends two integers, rank 1 receives one: MPI_ERR_TRUNCATE inside a task. The
  ! communicator's handler aborts (MPI's default), so the intercepted call fails the task
  ! with hytask's error, through this Fortran frame, and hytask_wait_all reports it.
  subroutine truncated(peer) bind(c)
    integer(c_int), value :: peer
    integer :: two(2), one, ierr
    two = 7
    if (peer == 1) then
      call MPI_Send(two, 2, MPI_INTEGER, 1, 60, MPI_COMM_WORLD, ierr)
    else
      call MPI_Recv(one, 1, MPI_INTEGER, 0, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      print '(a)', "not reached: the receive returned"
    end if
  end subroutine
end module misuse_body

program misuse
  use mpi
  use omp_lib
  use hytask_tasks
  use hytask_omp
  use misuse_body
  implicit none
  character(len=32) :: what
  integer :: ierr, provided, rank, r, buf
  integer(omp_event_handle_kind) :: ev
  type(hytask_commtask) :: ct

  call get_command_argument(1, what)
  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  select case (what)
  case ("spawn")  ! a task without a runtime
    call hytask_spawn(body, 1, ierr)
    print '(a,i0)', "hytask_spawn ierr ", ierr
  case ("start_twice")
    call hytask_start()
    call hytask_start(ierr)
    print '(a,i0)', "second hytask_start ierr ", ierr
    call hytask_stop()
  case ("fulfill")  ! a detached task's hand-over without a session: the task fulfils itself
    !$omp parallel num_threads(2)
    !$omp single
    !$omp task detach(ev) private(r, ierr) shared(buf)
    call MPI_Irecv(buf, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, r, ierr)
    call hytask_fulfill_when(ev, r, ierr)
    print '(a,i0,a,l1)', "hytask_fulfill_when ierr ", ierr, ", request kept ", r /= MPI_REQUEST_NULL
    if (ierr /= 0) then
      call MPI_Wait(r, MPI_STATUS_IGNORE, ierr)
      call omp_fulfill_event(ev)
    end if
    !$omp end task
    !$omp taskwait
    !$omp end single
    !$omp end parallel
  case ("commtask")  ! a commtask without a session
    call MPI_Irecv(buf, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, r, ierr)
    call hytask_commtask_add(ct, r, ierr)
    print '(a,i0,a,l1)', "hytask_commtask_add ierr ", ierr, ", request kept ", r /= MPI_REQUEST_NULL
    call MPI_Wait(r, MPI_STATUS_IGNORE, ierr)
  case ("session_twice")
    call hytask_session_start()
    call hytask_session_start(ierr)
    print '(a,i0)', "second hytask_session_start ierr ", ierr
    call hytask_session_end()
  case ("truncate")  ! an MPI error inside a task, on 2 ranks
    call hytask_start()
    call hytask_spawn(truncated, 1 - rank)
    call hytask_wait_all(ierr)
    if (rank == 1) print '(a,i0)', "rank 1: hytask_wait_all ierr ", ierr
    call hytask_stop()
  case ("no_ierr")  ! without an ierr the program stops, after hytask's message
    call hytask_wait_all()
    print '(a)', "not reached"
  case default
    print '(a)', "usage: misuse <spawn|start_twice|fulfill|commtask|session_twice|truncate|no_ierr>"
    stop 2
  end select
  call MPI_Finalize(ierr)
end program misuse
