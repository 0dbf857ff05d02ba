# Fortran (docs/intercept.md and docs/omp.md, "Fortran").
#
# The libraries carry their Fortran entry points whatever the compilers: the interception
# library interposes the Fortran MPI bindings that bypass the C symbols (src/intercept/
# fortran.cpp) and exports the C functions of the module hytask_tasks, hytask_omp those of
# the module hytask_omp. The two modules are Fortran sources (src/intercept/hytask_tasks.f90,
# src/omp/hytask_omp.f90), installed to share/hytask/fortran, which a program compiles with
# its own compiler (a .mod file belongs to one compiler and version).
#
# With a Fortran compiler (HYTASK_FORTRAN, default ON), the Fortran Jacobi example
# (examples/fortran/jacobi.F90) is built and tested with each MPI binding on each Debian MPI
# (tests/fortran). Without one, the project configures as before and says so.
#
# Sets HYTASK_FORTRAN_BUILT, and defines
#   hytask_fortran_mpi(<name> <out>)   <out>: an interface target with the flags of MPI
#                                      <name>'s Fortran wrapper (mpifort.<name>), or empty
set(HYTASK_FORTRAN_MODULE_SOURCES
  ${PROJECT_SOURCE_DIR}/src/intercept/hytask_tasks.f90
  ${PROJECT_SOURCE_DIR}/src/omp/hytask_omp.f90)
set(HYTASK_FORTRAN_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/hytask/fortran)  # HYTASK_FORTRAN_DIR in the package
install(FILES ${HYTASK_FORTRAN_MODULE_SOURCES} DESTINATION ${HYTASK_FORTRAN_INSTALL_DIR})

option(HYTASK_FORTRAN "Build and test the Fortran example (examples/fortran) when a Fortran compiler is found" ON)
set(HYTASK_FORTRAN_BUILT OFF)
if(NOT HYTASK_FORTRAN)
  message(STATUS "hytask: the Fortran example and tests are not built (HYTASK_FORTRAN=OFF)")
  return()
endif()
include(CheckLanguage)
check_language(Fortran)
if(NOT CMAKE_Fortran_COMPILER)
  message(STATUS "hytask: the Fortran example and tests are not built: no Fortran compiler "
                 "was found (Debian: gfortran; or -DCMAKE_Fortran_COMPILER=...). The libraries "
                 "keep their Fortran entry points.")
  return()
endif()
enable_language(Fortran)
if(NOT CMAKE_Fortran_COMPILER_ID STREQUAL "GNU")
  message(STATUS "hytask: the Fortran example and tests are not built: they use the MPI "
                 "modules of Debian's gfortran, and ${CMAKE_Fortran_COMPILER} is "
                 "${CMAKE_Fortran_COMPILER_ID}")
  return()
endif()
find_package(OpenMP COMPONENTS Fortran)
if(NOT OpenMP_Fortran_FOUND)
  message(STATUS "hytask: the Fortran example and tests are not built: OpenMP for Fortran is missing")
  return()
endif()

# The flags of MPI <name>'s Fortran wrapper (mpifort.openmpi -showme, mpifort.mpich -show):
# include directories (mpif.h and the modules), libraries, and the compile options (MPICH's
# -fallow-argument-mismatch, which mpif.h needs with gfortran 10 and later).
function(hytask_fortran_mpi name out)
  set(${out} "" PARENT_SCOPE)
  set(target hytask_fortran_mpi_${name})
  if(TARGET ${target})
    set(${out} ${target} PARENT_SCOPE)
    return()
  endif()
  find_program(HYTASK_MPIFORT_${name} NAMES mpifort.${name} mpif90.${name})
  if(NOT HYTASK_MPIFORT_${name})
    message(STATUS "hytask: no Fortran test against ${name}: mpifort.${name} is missing")
    return()
  endif()
  set(show -show)
  if(name STREQUAL "openmpi")
    set(show -showme)
  endif()
  execute_process(COMMAND ${HYTASK_MPIFORT_${name}} ${show} OUTPUT_VARIABLE line
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(STATUS "hytask: no Fortran test against ${name}: ${HYTASK_MPIFORT_${name}} ${show} failed")
    return()
  endif()
  separate_arguments(words UNIX_COMMAND "${line}")
  list(REMOVE_AT words 0)  # the compiler
  set(includes "")
  set(libs "")
  set(options "")
  foreach(w IN LISTS words)
    if(w MATCHES "^-I(.+)")
      list(APPEND includes "${CMAKE_MATCH_1}")
    elseif(w MATCHES "^-L(.+)")
      list(APPEND libs "-L${CMAKE_MATCH_1}")
    elseif(w MATCHES "^-l(.+)")
      list(APPEND libs "-l${CMAKE_MATCH_1}")
    elseif(w MATCHES "^-fallow-")
      list(APPEND options "${w}")
    endif()
  endforeach()
  add_library(${target} INTERFACE)
  target_include_directories(${target} INTERFACE ${includes})
  target_link_libraries(${target} INTERFACE ${libs})
  target_compile_options(${target} INTERFACE $<$<COMPILE_LANGUAGE:Fortran>:${options}>)
  set(${out} ${target} PARENT_SCOPE)
endfunction()

set(HYTASK_FORTRAN_BUILT ON)
message(STATUS "hytask: the Fortran example and tests are built (${CMAKE_Fortran_COMPILER})")
