! What a Fortran MPI call outside tasks costs with the interception library linked, beside
! the same program without it: MPI_Isend to MPI_PROC_NULL and MPI_Wait (both interposed on
! Open MPI), timed over many calls. Usage: call_cost [calls]   (one rank)
program call_cost
  use mpi_f08
  implicit none
  type(MPI_Request) :: r
  integer :: i, calls, x
  character(len=16) :: arg
  double precision :: t0, t1
  calls = 2000000
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) calls
  end if
  call MPI_Init()
  x = 0
  do i = 1, calls / 10  ! warm up
    call MPI_Isend(x, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, r)
    call MPI_Wait(r, MPI_STATUS_IGNORE)
  end do
  t0 = MPI_Wtime()
  do i = 1, calls
    call MPI_Isend(x, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, r)
    call MPI_Wait(r, MPI_STATUS_IGNORE)
  end do
  t1 = MPI_Wtime()
  print '(a,f8.1,a)', "MPI_Isend + MPI_Wait: ", (t1 - t0) / calls * 1d9, " ns per pair"
  call MPI_Finalize()
end program call_cost
