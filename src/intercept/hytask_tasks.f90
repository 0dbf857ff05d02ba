! hytask_tasks: hytask tasks for Fortran programs, so that their MPI calls run inside tasks,
! where the interception library (docs/intercept.md) makes the blocking ones suspend only
! their task. A task runs a subroutine with bind(c) and one integer argument, by value:
!
!   subroutine exchange(face) bind(c)
!     integer(c_int), value :: face
!
! Link the interception library (hytask::mpi_intercept) before MPI. Every procedure takes
! an optional ierr: 0 on success; without it an error ends the program (`error stop`)
! after hytask printed what went wrong. A task's failure (an intercepted MPI call that
! failed) is reported by the hytask_wait_all that covers it.
module hytask_tasks
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_funptr, c_funloc
  implicit none
  private

  public :: hytask_start, hytask_stop, hytask_spawn, hytask_wait_all, hytask_intercept_counters
  public :: hytask_task_body

  abstract interface
    subroutine hytask_task_body(arg) bind(c)
      import :: c_int
      integer(c_int), value :: arg
    end subroutine
  end interface

  interface
    integer(c_int) function c_start() bind(c, name="hytask_f_start")
      import :: c_int
    end function
    integer(c_int) function c_stop() bind(c, name="hytask_f_stop")
      import :: c_int
    end function
    integer(c_int) function c_spawn(body, arg) bind(c, name="hytask_f_spawn")
      import :: c_int, c_funptr
      type(c_funptr), value :: body
      integer(c_int), value :: arg
    end function
    integer(c_int) function c_wait_all() bind(c, name="hytask_f_wait_all")
      import :: c_int
    end function
    subroutine c_counters(in_tasks, fortran_calls, fortran_in_tasks) &
        bind(c, name="hytask_f_intercept_counters")
      import :: c_int64_t
      integer(c_int64_t), intent(out) :: in_tasks, fortran_calls, fortran_in_tasks
    end subroutine
  end interface

contains

  subroutine give(rc, ierr, what)
    integer(c_int), intent(in) :: rc
    integer, intent(out), optional :: ierr
    character(*), intent(in) :: what
    if (present(ierr)) then
      ierr = int(rc)
    else if (rc /= 0) then
      error stop what
    end if
  end subroutine give

  ! Starts hytask's runtime (HYTASK_* variables configure it). It adopts MPI if the program
  ! initialised it (MPI_Init_thread with MPI_THREAD_MULTIPLE), and otherwise initialises it
  ! and finalises it in hytask_stop.
  subroutine hytask_start(ierr)
    integer, intent(out), optional :: ierr
    call give(c_start(), ierr, "hytask_start failed (see the message above)")
  end subroutine

  ! Waits for every task and stops the runtime.
  subroutine hytask_stop(ierr)
    integer, intent(out), optional :: ierr
    call give(c_stop(), ierr, "hytask_stop failed (see the message above)")
  end subroutine

  ! A task that calls body(arg).
  subroutine hytask_spawn(body, arg, ierr)
    procedure(hytask_task_body) :: body
    integer, intent(in) :: arg
    integer, intent(out), optional :: ierr
    call give(c_spawn(c_funloc(body), int(arg, c_int)), ierr, &
              "hytask_spawn failed (see the message above)")
  end subroutine

  ! Returns once every task spawned has completed (the calling thread runs tasks meanwhile).
  subroutine hytask_wait_all(ierr)
    integer, intent(out), optional :: ierr
    call give(c_wait_all(), ierr, "hytask_wait_all failed: a task failed, or misuse (see the message above)")
  end subroutine

  ! The interception library's counters (hytask::intercept::stats): MPI calls handled inside
  ! tasks, calls of the Fortran bindings that reached the library, and those inside tasks.
  subroutine hytask_intercept_counters(in_tasks, fortran_calls, fortran_in_tasks)
    integer(c_int64_t), intent(out) :: in_tasks, fortran_calls, fortran_in_tasks
    call c_counters(in_tasks, fortran_calls, fortran_in_tasks)
  end subroutine

end module hytask_tasks
