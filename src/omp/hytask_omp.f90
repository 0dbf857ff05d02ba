! hytask_omp: hytask's OpenMP companion (docs/omp.md) for Fortran programs. A task declared
! `!$omp task detach(ev)` posts its MPI requests and hands them, with its event, to
! hytask_fulfill_when; its successors start once the requests have completed, and no thread
! blocks meanwhile. Fork-join codes use hytask_commtask (Buettner's commtask init/finalize).
!
! MPI handles are the Fortran ones: integers from mpif.h and `use mpi`, a request's MPI_VAL
! with `use mpi_f08`. A request handed over is hytask's: the call sets the program's
! handle to MPI_REQUEST_NULL (not when it failed: the request is still the program's).
! Every procedure takes an optional ierr: 0 on success; without it an error ends the
! program (`error stop`) after hytask printed what went wrong.
module hytask_omp
  use, intrinsic :: iso_c_binding, only: c_int, c_intptr_t, c_int64_t, c_ptr, c_null_ptr, &
                                         c_associated
  use omp_lib, only: omp_event_handle_kind
  implicit none
  private

  public :: hytask_session_start, hytask_session_end, hytask_fulfill_when
  public :: hytask_commtask, hytask_commtask_add, hytask_commtask_test, hytask_commtask_done
  public :: hytask_commtask_finalize, hytask_commtask_free, hytask_omp_fulfilled

  ! A commtask: requests handed over together and finalised together. Free it with
  ! hytask_commtask_free once its last finalize has returned.
  type :: hytask_commtask
    type(c_ptr) :: handle = c_null_ptr
  end type hytask_commtask

  interface hytask_fulfill_when
    module procedure fulfill_one, fulfill_many
  end interface hytask_fulfill_when

  interface hytask_commtask_add
    module procedure commtask_add_one, commtask_add_many
  end interface hytask_commtask_add

  interface
    integer(c_int) function c_session_start() bind(c, name="hytask_omp_f_session_start")
      import :: c_int
    end function
    integer(c_int) function c_session_end() bind(c, name="hytask_omp_f_session_end")
      import :: c_int
    end function
    integer(c_int) function c_fulfill_when(event, count, requests) &
        bind(c, name="hytask_omp_f_fulfill_when")
      import :: c_int, c_intptr_t
      integer(c_intptr_t), value :: event
      integer(c_int), value :: count
      integer(c_int), intent(inout) :: requests(*)
    end function
    type(c_ptr) function c_commtask_new() bind(c, name="hytask_omp_f_commtask_new")
      import :: c_ptr
    end function
    subroutine c_commtask_delete(ct) bind(c, name="hytask_omp_f_commtask_delete")
      import :: c_ptr
      type(c_ptr), value :: ct
    end subroutine
    integer(c_int) function c_commtask_add(ct, count, requests) &
        bind(c, name="hytask_omp_f_commtask_add")
      import :: c_int, c_ptr
      type(c_ptr), value :: ct
      integer(c_int), value :: count
      integer(c_int), intent(inout) :: requests(*)
    end function
    integer(c_int) function c_commtask_test(ct, poll, flag) &
        bind(c, name="hytask_omp_f_commtask_test")
      import :: c_int, c_ptr
      type(c_ptr), value :: ct
      integer(c_int), value :: poll
      integer(c_int), intent(out) :: flag
    end function
    integer(c_int) function c_commtask_finalize(ct) bind(c, name="hytask_omp_f_commtask_finalize")
      import :: c_int, c_ptr
      type(c_ptr), value :: ct
    end function
    integer(c_int64_t) function c_fulfilled() bind(c, name="hytask_omp_f_fulfilled")
      import :: c_int64_t
    end function
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

  ! Start hytask's session (docs/omp.md): after MPI_Init_thread with MPI_THREAD_MULTIPLE,
  ! outside any parallel region; the MPI stays the program's.
  subroutine hytask_session_start(ierr)
    integer, intent(out), optional :: ierr
    call give(c_session_start(), ierr, "hytask_session_start failed (see the message above)")
  end subroutine

  ! Waits for every request handed over, then ends the session; before MPI_Finalize.
  subroutine hytask_session_end(ierr)
    integer, intent(out), optional :: ierr
    call give(c_session_end(), ierr, "hytask_session_end failed (see the message above)")
  end subroutine

  ! In a task declared `detach(event)`: the event is fulfilled once the request(s) have
  ! completed. Returns at once.
  subroutine fulfill_one(event, request, ierr)
    integer(omp_event_handle_kind), intent(in) :: event
    integer, intent(inout) :: request
    integer, intent(out), optional :: ierr
    integer(c_int) :: r(1)
    r(1) = request
    call give(c_fulfill_when(int(event, c_intptr_t), 1_c_int, r), ierr, &
              "hytask_fulfill_when failed (see the message above)")
    request = r(1)
  end subroutine

  subroutine fulfill_many(event, requests, ierr)
    integer(omp_event_handle_kind), intent(in) :: event
    integer, intent(inout) :: requests(:)
    integer, intent(out), optional :: ierr
    integer(c_int) :: r(size(requests))
    r = requests
    call give(c_fulfill_when(int(event, c_intptr_t), int(size(r), c_int), r), ierr, &
              "hytask_fulfill_when failed (see the message above)")
    requests = r
  end subroutine

  subroutine commtask_add_many(ct, requests, ierr)
    type(hytask_commtask), intent(inout) :: ct
    integer, intent(inout) :: requests(:)
    integer, intent(out), optional :: ierr
    integer(c_int) :: r(size(requests))
    if (.not. c_associated(ct%handle)) ct%handle = c_commtask_new()
    if (.not. c_associated(ct%handle)) then
      call give(1_c_int, ierr, "hytask_commtask_add failed (see the message above)")
      return
    end if
    r = requests
    call give(c_commtask_add(ct%handle, int(size(r), c_int), r), ierr, &
              "hytask_commtask_add failed (see the message above)")
    requests = r
  end subroutine

  subroutine commtask_add_one(ct, request, ierr)
    type(hytask_commtask), intent(inout) :: ct
    integer, intent(inout) :: request
    integer, intent(out), optional :: ierr
    integer(c_int) :: r(1)
    r(1) = request
    call commtask_add_many(ct, r, ierr)
    request = r(1)
  end subroutine

  ! The advance-check: polls once, then says whether every request added has completed.
  logical function hytask_commtask_test(ct, ierr)
    type(hytask_commtask), intent(in) :: ct
    integer, intent(out), optional :: ierr
    integer(c_int) :: flag
    flag = 1
    if (present(ierr)) ierr = 0
    if (c_associated(ct%handle)) &
      call give(c_commtask_test(ct%handle, 1_c_int, flag), ierr, &
                "hytask_commtask_test failed (see the message above)")
    hytask_commtask_test = flag /= 0
  end function

  ! Whether hytask's progress has completed every request added; polls nothing.
  logical function hytask_commtask_done(ct)
    type(hytask_commtask), intent(in) :: ct
    integer(c_int) :: flag, rc
    flag = 1
    if (c_associated(ct%handle)) rc = c_commtask_test(ct%handle, 0_c_int, flag)
    hytask_commtask_done = flag /= 0
  end function

  ! Returns once every request added has completed; the commtask can then be used again.
  subroutine hytask_commtask_finalize(ct, ierr)
    type(hytask_commtask), intent(inout) :: ct
    integer, intent(out), optional :: ierr
    if (present(ierr)) ierr = 0
    if (c_associated(ct%handle)) &
      call give(c_commtask_finalize(ct%handle), ierr, &
                "hytask_commtask_finalize failed (see the message above)")
  end subroutine

  ! Waits for requests still pending (errors unreported: finalize first), then frees it.
  subroutine hytask_commtask_free(ct)
    type(hytask_commtask), intent(inout) :: ct
    if (c_associated(ct%handle)) call c_commtask_delete(ct%handle)
    ct%handle = c_null_ptr
  end subroutine

  ! Events the session's fulfill_when has fulfilled so far; -1 without a session.
  integer(c_int64_t) function hytask_omp_fulfilled()
    hytask_omp_fulfilled = c_fulfilled()
  end function

end module hytask_omp
