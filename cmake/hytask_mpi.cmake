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
#   HYTASK_OTHER_MPICXX    its compiler wrapper (tests/install builds hytask with it)
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
# variables and more ranks than cores without --oversubscribe; MPICH needs neither. The tests
# run on one node, where Open MPI picks the ob1 PML (shared memory through vader), yet the
# selection first probes the matching-transport PML (cm, for PSM/PSM2/OFI fabrics) at every
# MPI_Init: 0.37 s against 0.16 s for an empty program on 2 ranks with Debian's Open MPI 4.1.
# Naming ob1 skips the probe without changing the transport; over the ~490 Open MPI tests
# that is about 110 s of the suite. (Not pml ^cm: that replaces Debian's pml = ^ucx in
# /etc/openmpi/openmpi-mca-params.conf, and UCX's PML, once loaded, crashes under TSan.)
function(hytask_mpi_launch flavour flags_out env_out)
  if(flavour STREQUAL "openmpi")
    set(${flags_out} --oversubscribe --bind-to none PARENT_SCOPE)
    set(${env_out} OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
                   OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_pml=ob1 PARENT_SCOPE)
  else()
    set(${flags_out} "" PARENT_SCOPE)
    set(${env_out} "" PARENT_SCOPE)
  endif()
endfunction()

hytask_mpi_flavour(${MPIEXEC_EXECUTABLE} HYTASK_MPI_NAME)
message(STATUS "hytask: building against ${HYTASK_MPI_NAME} (${MPIEXEC_EXECUTABLE})")

# The MPI the installed package must find again (cmake/hytaskConfig.cmake.in): the compiler
# wrapper and launcher FindMPI used, with Debian's update-alternatives links resolved
# (/usr/bin/mpicxx -> /etc/alternatives/mpicxx -> /usr/bin/mpic++.openmpi), so that switching
# the system's default MPI later cannot point a consumer at another one; other links are kept
# (Open MPI's wrappers are links to opal_wrapper, which goes by the name it is called with).
# And MPI's libraries, as real paths, to compare with the consumer's.
function(hytask_skip_alternatives path out)
  foreach(i RANGE 8)
    if(NOT IS_SYMLINK "${path}")
      break()
    endif()
    file(READ_SYMLINK "${path}" target)
    if(NOT IS_ABSOLUTE "${target}")
      get_filename_component(dir "${path}" DIRECTORY)
      set(target "${dir}/${target}")
    endif()
    if(NOT path MATCHES "^/etc/alternatives/" AND NOT target MATCHES "^/etc/alternatives/")
      break()
    endif()
    set(path "${target}")
  endforeach()
  set(${out} "${path}" PARENT_SCOPE)
endfunction()
set(HYTASK_MPI_CXX_COMPILER_PINNED "")
if(MPI_CXX_COMPILER)
  hytask_skip_alternatives("${MPI_CXX_COMPILER}" HYTASK_MPI_CXX_COMPILER_PINNED)
endif()
hytask_skip_alternatives("${MPIEXEC_EXECUTABLE}" HYTASK_MPIEXEC_PINNED)
set(HYTASK_MPI_LIBRARIES_REAL "")
foreach(lib IN LISTS MPI_CXX_LIBRARIES)
  if(IS_ABSOLUTE "${lib}" AND EXISTS "${lib}")
    file(REAL_PATH "${lib}" lib)
  endif()
  list(APPEND HYTASK_MPI_LIBRARIES_REAL "${lib}")
endforeach()

option(HYTASK_TEST_OTHER_MPI
  "Also build the MPI tests against the other Debian MPI (MPICH or Open MPI), when installed" ON)
set(HYTASK_OTHER_MPI "")
if(HYTASK_TEST_OTHER_MPI AND HYTASK_BUILD_TESTS)
  if(HYTASK_MPI_NAME STREQUAL "openmpi")
    set(other mpich)
    set(other_module mpich)
    set(other_exec mpiexec.mpich)
    set(other_cxx mpicxx.mpich)
  elseif(HYTASK_MPI_NAME STREQUAL "mpich")
    set(other openmpi)
    set(other_module ompi-c)
    set(other_exec mpiexec.openmpi)
    set(other_cxx mpicxx.openmpi)
  endif()
  if(DEFINED other)
    pkg_check_modules(HYTASK_OTHER_MPI_PC QUIET IMPORTED_TARGET GLOBAL ${other_module})
    find_program(HYTASK_OTHER_MPIEXEC ${other_exec})
    find_program(HYTASK_OTHER_MPICXX ${other_cxx})
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
