# MPI for hytask.
#
# The library is built against the MPI that find_package(MPI) finds: Debian's default is
# Open MPI; choose MPICH with -DMPI_CXX_COMPILER=mpicxx.mpich (its launcher follows).
# Only MPI's C API is used (from C++), so MPI's deprecated C++ bindings are skipped.
#
# Which MPI it is comes from the MPI hytask compiles and links (the macros of MPI::MPI_CXX's
# mpi.h), not from the launcher: FindMPI looks for `mpiexec` on its own, so a compiler
# alone can come with the system default's launcher (MPICH's library, Open MPI's mpiexec).
# The launcher must be the same MPI's:
#   - MPIEXEC_EXECUTABLE given by the user: kept, and refused (FATAL_ERROR) when its
#     `--version` says it is the other MPI's (Open MPI against MPICH);
#   - not given: FindMPI's, unless it is the other MPI's (or there is none); then this MPI's
#     own (an mpiexec beside the compiler wrapper, Debian's mpiexec.<name>); FATAL_ERROR
#     when only the other MPI's was found.
# Another MPI (a vendor's, an MPICH derivative) is named "mpi" and keeps the launcher found.
#
# Sets:
#   HYTASK_MPI_NAME        openmpi | mpich | mpi (another MPI)
#   HYTASK_MPI_VERSION     its version, from mpi.h (empty for another MPI)
#   MPIEXEC_EXECUTABLE     (cache) the launcher, as above
#   HYTASK_OTHER_MPI       the other Debian MPI, when HYTASK_TEST_OTHER_MPI is ON and it is
#                          installed: the tests are then built and run against both MPIs in one
#                          build tree, through the imported target hytask_other_mpi
#   HYTASK_OTHER_MPIEXEC   its launcher
#   HYTASK_OTHER_MPICXX    its compiler wrapper (tests/install builds hytask with it)

# Whether the user chose the launcher: MPIEXEC_EXECUTABLE set to anything but what this file
# chose at the last configure (HYTASK_MPIEXEC_CHOSEN, empty when the user chose). In a tree
# configured before this file recorded its choice (MPI_CXX_SKIP_MPICXX, below, is cached
# already) the launcher cached was FindMPI's; in a new tree, it is the user's -D.
if(NOT MPIEXEC_EXECUTABLE)
  set(hytask_mpiexec_given FALSE)
elseif(DEFINED HYTASK_MPIEXEC_CHOSEN)
  string(COMPARE NOTEQUAL "${MPIEXEC_EXECUTABLE}" "${HYTASK_MPIEXEC_CHOSEN}" hytask_mpiexec_given)
elseif(DEFINED CACHE{MPI_CXX_SKIP_MPICXX})
  set(hytask_mpiexec_given FALSE)
else()
  set(hytask_mpiexec_given TRUE)
endif()
set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "Use MPI's C API only")
find_package(MPI REQUIRED COMPONENTS CXX)

# hytask_mpi_flavour(<launcher> <out>): the MPI a launcher belongs to, by its `--version`:
# openmpi, mpich (Hydra), or mpi (not recognised: srun, a vendor's).
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

# hytask_mpi_identity(<name out> <version out>): which MPI MPI::MPI_CXX is, from its mpi.h:
# OPEN_MPI -> openmpi, MPICH_VERSION -> mpich (but not the derivatives that define it too,
# Intel MPI and MVAPICH: mpi), else mpi. One compile into a static library whose string
# constant is read back (no link and no run: fine on a login node or when cross-compiling);
# kept in the cache while the compiler, its flags and MPI's stay the same.
function(hytask_mpi_identity name_out version_out)
  set(key "${CMAKE_CXX_COMPILER}|${CMAKE_CXX_FLAGS}|${MPI_CXX_COMPILER}|${MPI_CXX_INCLUDE_DIRS}|${MPI_CXX_COMPILE_DEFINITIONS}|${MPI_CXX_COMPILE_OPTIONS}")
  if(NOT key STREQUAL "${HYTASK_MPI_IDENTITY_KEY}")
    set(dir ${CMAKE_BINARY_DIR}/CMakeFiles/hytask_mpi_identity)
    file(WRITE ${dir}/identity.cpp [=[
#include <mpi.h>
#define HYTASK_STR2(x) #x
#define HYTASK_STR(x) HYTASK_STR2(x)
#if defined(OPEN_MPI)
#define HYTASK_ID "openmpi " HYTASK_STR(OMPI_MAJOR_VERSION) "." HYTASK_STR(OMPI_MINOR_VERSION) "." HYTASK_STR(OMPI_RELEASE_VERSION)
#elif defined(MPICH_VERSION) && !defined(I_MPI_VERSION) && !defined(MVAPICH2_VERSION) && !defined(MVAPICH_VERSION)
#define HYTASK_ID "mpich " MPICH_VERSION
#else
#define HYTASK_ID "mpi "
#endif
extern const char hytask_mpi_identity[];
const char hytask_mpi_identity[] = "HYTASK_MPI_IDENTITY=" HYTASK_ID "=";
]=])
    set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
    try_compile(ok ${dir}/build ${dir}/identity.cpp LINK_LIBRARIES MPI::MPI_CXX
                OUTPUT_VARIABLE log COPY_FILE ${dir}/identity.a)
    set(id "")
    if(ok)
      file(STRINGS ${dir}/identity.a id REGEX "HYTASK_MPI_IDENTITY=[^=]*=" LIMIT_COUNT 1)
    endif()
    if(NOT id MATCHES "HYTASK_MPI_IDENTITY=([a-z]+) ([^=]*)=")
      message(FATAL_ERROR "hytask: cannot tell which MPI this is: compiling ${dir}/identity.cpp "
                          "against MPI::MPI_CXX (MPI_CXX_COMPILER=${MPI_CXX_COMPILER}) "
                          "failed:\n${log}")
    endif()
    set(HYTASK_MPI_IDENTITY "${CMAKE_MATCH_1};${CMAKE_MATCH_2}" CACHE INTERNAL "hytask: MPI name and version")
    set(HYTASK_MPI_IDENTITY_KEY "${key}" CACHE INTERNAL "hytask: what HYTASK_MPI_IDENTITY was found for")
  endif()
  list(GET HYTASK_MPI_IDENTITY 0 name)
  list(GET HYTASK_MPI_IDENTITY 1 version)
  set(${name_out} "${name}" PARENT_SCOPE)
  set(${version_out} "${version}" PARENT_SCOPE)
endfunction()

# hytask_find_mpiexec(<name> <out>): a launcher of MPI <name> (openmpi or mpich) whose
# `--version` says so, beside the compiler wrapper or MPI's libraries (../bin) first, then on
# the PATH; Debian's name (mpiexec.<name>) before plain mpiexec, which may be the alternatives
# link to the system's default MPI. <out> is empty if there is none.
function(hytask_find_mpiexec name out)
  set(hints "")
  if(MPI_CXX_COMPILER)
    get_filename_component(dir "${MPI_CXX_COMPILER}" DIRECTORY)
    list(APPEND hints "${dir}")
  endif()
  foreach(lib IN LISTS MPI_CXX_LIBRARIES)
    if(IS_ABSOLUTE "${lib}")
      get_filename_component(dir "${lib}" DIRECTORY)
      list(APPEND hints "${dir}/../bin")
    endif()
  endforeach()
  set(names mpiexec.${name} mpiexec mpirun.${name} mpirun)
  if(name STREQUAL "mpich")
    list(APPEND names mpiexec.hydra)
  endif()
  foreach(where IN ITEMS NO_DEFAULT_PATH "")
    foreach(exe IN LISTS names)
      unset(candidate)
      find_program(candidate NAMES ${exe} HINTS ${hints} NO_CACHE ${where})
      if(candidate)
        hytask_mpi_flavour("${candidate}" flavour)
        if(flavour STREQUAL name)
          set(${out} "${candidate}" PARENT_SCOPE)
          return()
        endif()
      endif()
    endforeach()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

hytask_mpi_identity(HYTASK_MPI_NAME HYTASK_MPI_VERSION)
set(hytask_mpi_title_openmpi "Open MPI")
set(hytask_mpi_title_mpich "MPICH")
set(hytask_mpi_title_mpi "another MPI")
set(hytask_mpi "${hytask_mpi_title_${HYTASK_MPI_NAME}} ${HYTASK_MPI_VERSION}")
if(MPI_CXX_COMPILER)
  string(APPEND hytask_mpi " (MPI_CXX_COMPILER=${MPI_CXX_COMPILER})")
endif()
set(hytask_mpiexec_flavour "")
if(MPIEXEC_EXECUTABLE)
  hytask_mpi_flavour("${MPIEXEC_EXECUTABLE}" hytask_mpiexec_flavour)
endif()
# Mismatched: Open MPI's launcher for MPICH, or the reverse.
set(hytask_mpiexec_mismatch FALSE)
if(HYTASK_MPI_NAME MATCHES "^(openmpi|mpich)$" AND hytask_mpiexec_flavour MATCHES "^(openmpi|mpich)$"
   AND NOT hytask_mpiexec_flavour STREQUAL HYTASK_MPI_NAME)
  set(hytask_mpiexec_mismatch TRUE)
endif()
if(hytask_mpiexec_given)
  set(HYTASK_MPIEXEC_CHOSEN "" CACHE INTERNAL "hytask: the launcher it chose (empty: the user's)")
endif()
if(hytask_mpiexec_mismatch AND hytask_mpiexec_given)
  hytask_find_mpiexec(${HYTASK_MPI_NAME} hytask_mpiexec_matching)
  if(NOT hytask_mpiexec_matching)
    set(hytask_mpiexec_matching "<${hytask_mpi_title_${HYTASK_MPI_NAME}}'s mpiexec>")
  endif()
  # The other pair, for the message: Debian's compiler name when it is installed.
  find_program(hytask_other_cxx NAMES mpicxx.${hytask_mpiexec_flavour} NO_CACHE)
  if(NOT hytask_other_cxx)
    set(hytask_other_cxx "<${hytask_mpi_title_${hytask_mpiexec_flavour}}'s mpicxx>")
  endif()
  message(FATAL_ERROR
    "hytask: MPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE} is "
    "${hytask_mpi_title_${hytask_mpiexec_flavour}}'s launcher, but the MPI hytask builds "
    "against is ${hytask_mpi}: that launcher would start its programs as unconnected "
    "single processes. Name a matching pair. ${hytask_mpi_title_${HYTASK_MPI_NAME}}: "
    "-DMPIEXEC_EXECUTABLE=${hytask_mpiexec_matching} (or -UMPIEXEC_EXECUTABLE, and hytask "
    "picks it). ${hytask_mpi_title_${hytask_mpiexec_flavour}}, in a fresh build directory: "
    "-DMPI_CXX_COMPILER=${hytask_other_cxx} -DMPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE}")
endif()
if(NOT hytask_mpiexec_given AND HYTASK_MPI_NAME MATCHES "^(openmpi|mpich)$"
   AND (hytask_mpiexec_mismatch OR NOT MPIEXEC_EXECUTABLE))
  # FindMPI found the other MPI's launcher, or none: look for this MPI's.
  hytask_find_mpiexec(${HYTASK_MPI_NAME} hytask_mpiexec_matching)
  if(hytask_mpiexec_matching)
    if(MPIEXEC_EXECUTABLE)
      message(STATUS "hytask: ${MPIEXEC_EXECUTABLE} is ${hytask_mpi_title_${hytask_mpiexec_flavour}}'s "
                     "launcher: using ${hytask_mpi_title_${HYTASK_MPI_NAME}}'s, ${hytask_mpiexec_matching}")
    endif()
    set(MPIEXEC_EXECUTABLE "${hytask_mpiexec_matching}" CACHE FILEPATH "Executable for running MPI programs." FORCE)
    set(MPIEXEC "${MPIEXEC_EXECUTABLE}")
  elseif(hytask_mpiexec_mismatch)
    message(FATAL_ERROR
      "hytask: the MPI hytask builds against is ${hytask_mpi}, but the launcher found, "
      "${MPIEXEC_EXECUTABLE}, is ${hytask_mpi_title_${hytask_mpiexec_flavour}}'s, and no "
      "${hytask_mpi_title_${HYTASK_MPI_NAME}} launcher was found (mpiexec beside the compiler "
      "wrapper, mpiexec.${HYTASK_MPI_NAME}). Name it: "
      "-DMPIEXEC_EXECUTABLE=<${hytask_mpi_title_${HYTASK_MPI_NAME}}'s mpiexec>")
  endif()
endif()
if(NOT hytask_mpiexec_given)
  set(HYTASK_MPIEXEC_CHOSEN "${MPIEXEC_EXECUTABLE}" CACHE INTERNAL "hytask: the launcher it chose (empty: the user's)")
endif()
string(STRIP "${HYTASK_MPI_NAME} ${HYTASK_MPI_VERSION}" hytask_mpi)
message(STATUS "hytask: building against ${hytask_mpi} (launcher ${MPIEXEC_EXECUTABLE})")

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
# A launcher given by name only (-DMPIEXEC_EXECUTABLE=mpiexec.mpich) is pinned as its path.
set(hytask_mpiexec_path "${MPIEXEC_EXECUTABLE}")
if(MPIEXEC_EXECUTABLE AND NOT IS_ABSOLUTE "${MPIEXEC_EXECUTABLE}")
  unset(hytask_mpiexec_path)
  find_program(hytask_mpiexec_path NAMES "${MPIEXEC_EXECUTABLE}" NO_CACHE)
  if(NOT hytask_mpiexec_path)
    set(hytask_mpiexec_path "${MPIEXEC_EXECUTABLE}")
  endif()
endif()
hytask_skip_alternatives("${hytask_mpiexec_path}" HYTASK_MPIEXEC_PINNED)
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
