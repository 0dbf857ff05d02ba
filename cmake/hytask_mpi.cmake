# MPI for hytask.
#
# The library is built against the MPI that find_package(MPI) finds: Debian's default is
# Open MPI; choose MPICH with
#   -DMPI_CXX_COMPILER=mpicxx.mpich -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich
# Only MPI's C API is used (from C++), so MPI's deprecated C++ bindings are skipped.
#
# Sets:
#   HYTASK_MPI_NAME        openmpi | mpich | mpi (unrecognised launcher)
#   HYTASK_OTHER_MPI       the other Debian MPI, when HYTASK_TEST_OTHER_MPI is ON and it is
#                          installed: the tests are then built and run against both MPIs in one
#                          build tree, through the imported target hytask_other_mpi
#   HYTASK_OTHER_MPIEXEC   its launcher
set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "Use MPI's C API only")
find_package(MPI REQUIRED COMPONENTS CXX)

function(hytask_mpi_flavour mpiexec out)
  execute_process(COMMAND ${mpiexec} --version OUTPUT_VARIABLE v ERROR_VARIABLE v
                  RESULT_VARIABLE rc TIMEOUT 30)
  if(v MATCHES "Open MPI|OpenRTE")
    set(${out} openmpi PARENT_SCOPE)
  elseif(v MATCHES "HYDRA|MPICH")
    set(${out} mpich PARENT_SCOPE)
  else()
    set(${out} mpi PARENT_SCOPE)
  endif()
endfunction()


# Launcher flags and environment for a flavour: Open MPI refuses root without its two
# variables and more ranks than cores without --oversubscribe; MPICH needs neither.
function(hytask_mpi_launch flavour flags_out env_out)
  if(flavour STREQUAL "openmpi")
    set(${flags_out} --oversubscribe --bind-to none PARENT_SCOPE)
    set(${env_out} OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
                   OMPI_MCA_rmaps_base_oversubscribe=1 PARENT_SCOPE)
  else()
    set(${flags_out} "" PARENT_SCOPE)
    set(${env_out} "" PARENT_SCOPE)
  endif()
endfunction()

hytask_mpi_flavour(${MPIEXEC_EXECUTABLE} HYTASK_MPI_NAME)
message(STATUS "hytask: building against ${HYTASK_MPI_NAME} (${MPIEXEC_EXECUTABLE})")

option(HYTASK_TEST_OTHER_MPI
  "Also build the MPI tests against the other Debian MPI (MPICH or Open MPI), when installed" ON)
set(HYTASK_OTHER_MPI "")
if(HYTASK_TEST_OTHER_MPI AND HYTASK_BUILD_TESTS)
  if(HYTASK_MPI_NAME STREQUAL "openmpi")
    set(other mpich)
    set(other_module mpich)
    set(other_exec mpiexec.mpich)
  elseif(HYTASK_MPI_NAME STREQUAL "mpich")
    set(other openmpi)
    set(other_module ompi-c)
    set(other_exec mpiexec.openmpi)
  endif()
  if(DEFINED other)
    pkg_check_modules(HYTASK_OTHER_MPI_PC QUIET IMPORTED_TARGET GLOBAL ${other_module})
    find_program(HYTASK_OTHER_MPIEXEC ${other_exec})
    if(HYTASK_OTHER_MPI_PC_FOUND AND HYTASK_OTHER_MPIEXEC)
      hytask_mpi_flavour(${HYTASK_OTHER_MPIEXEC} flavour)
      if(flavour STREQUAL other)
        set(HYTASK_OTHER_MPI ${other})
        add_library(hytask_other_mpi INTERFACE IMPORTED GLOBAL)
        target_link_libraries(hytask_other_mpi INTERFACE PkgConfig::HYTASK_OTHER_MPI_PC)
        message(STATUS "hytask: the MPI tests also run against ${other} (${HYTASK_OTHER_MPIEXEC})")
      endif()
    endif()
    if(NOT HYTASK_OTHER_MPI)
      message(STATUS "hytask: ${other} is not installed: the MPI tests run against ${HYTASK_MPI_NAME} only")
    endif()
  endif()
endif()
