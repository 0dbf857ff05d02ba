# The MPI a build records (cmake/hytask_mpi.cmake) comes from the MPI it compiles against,
# and the launcher follows it: configures hytask (library only, no build) with
#   1. only -DMPI_CXX_COMPILER=COMPILER: the package (hytaskConfig.cmake of the build tree)
#      must name NAME and its launcher MPIEXEC, whatever mpiexec the PATH has first;
#   2. COMPILER with the other MPI's launcher OTHER_MPIEXEC: must fail, naming that launcher
#      and, as the fix, -DMPIEXEC_EXECUTABLE=<MPIEXEC>.
#
#   cmake -DSOURCE_TREE=... -DWORK_DIR=... -DGENERATOR=... -DCXX=... -DCOMPILER=...
#         -DNAME=openmpi|mpich -DMPIEXEC=... -DOTHER_MPIEXEC=... -P mpi_identity.cmake
foreach(v SOURCE_TREE WORK_DIR GENERATOR CXX COMPILER NAME MPIEXEC OTHER_MPIEXEC)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "mpi_identity.cmake: ${v} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})

function(configure dir)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_TREE} -B ${WORK_DIR}/${dir} -G ${GENERATOR}
                    -DCMAKE_CXX_COMPILER=${CXX} -DHYTASK_BUILD_TESTS=OFF
                    -DHYTASK_BUILD_EXAMPLES=OFF -DHYTASK_BUILD_BENCH=OFF
                    -DHYTASK_BUILD_APPS=OFF ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 300)
  set(rc "${rc}" PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
endfunction()

# 1. The compiler alone.
configure(compiler_only -DMPI_CXX_COMPILER=${COMPILER})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring with -DMPI_CXX_COMPILER=${COMPILER} failed (${rc}):\n${out}")
endif()
file(STRINGS ${WORK_DIR}/compiler_only/hytaskConfig.cmake recorded
     REGEX "^set\\(_hytask_(mpi_name|mpiexec) ")
set(name "")
set(launcher "")
foreach(line IN LISTS recorded)
  if(line MATCHES "^set\\(_hytask_mpi_name \"([^\"]*)\"\\)")
    set(name "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^set\\(_hytask_mpiexec \"([^\"]*)\"\\)")
    set(launcher "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT name STREQUAL NAME)
  message(FATAL_ERROR "-DMPI_CXX_COMPILER=${COMPILER}: the package names '${name}', not ${NAME}:\n${out}")
endif()
file(REAL_PATH "${MPIEXEC}" expected)
if(NOT launcher OR NOT EXISTS "${launcher}")
  message(FATAL_ERROR "-DMPI_CXX_COMPILER=${COMPILER}: the package records no launcher ('${launcher}')")
endif()
file(REAL_PATH "${launcher}" launcher_real)
if(NOT launcher_real STREQUAL expected)
  message(FATAL_ERROR "-DMPI_CXX_COMPILER=${COMPILER}: the package records the launcher "
                      "${launcher} (${launcher_real}), not ${NAME}'s ${MPIEXEC} (${expected})")
endif()
message(STATUS "-DMPI_CXX_COMPILER=${COMPILER}: ${name}, ${launcher}")

# 2. The other MPI's launcher with it.
configure(mismatched -DMPI_CXX_COMPILER=${COMPILER} -DMPIEXEC_EXECUTABLE=${OTHER_MPIEXEC})
string(REGEX REPLACE "[ \n]+" " " said "${out}")
string(REPLACE "+" "\\+" other "${OTHER_MPIEXEC}")
if(rc EQUAL 0 OR NOT said MATCHES "MPIEXEC_EXECUTABLE=${other} is [^ ]+( MPI)?'s launcher, but the MPI hytask builds against is")
  message(FATAL_ERROR "-DMPI_CXX_COMPILER=${COMPILER} -DMPIEXEC_EXECUTABLE=${OTHER_MPIEXEC} was "
                      "not refused with a reason (${rc}):\n${out}")
endif()
# The fix it names first is this MPI's launcher.
set(fix "")
if(said MATCHES "Name a matching pair\\. [^:]+: -DMPIEXEC_EXECUTABLE=([^ ]+) ")
  set(fix "${CMAKE_MATCH_1}")
endif()
if(NOT fix OR NOT EXISTS "${fix}")
  message(FATAL_ERROR "the refusal names no launcher to use:\n${out}")
endif()
file(REAL_PATH "${fix}" fix_real)
if(NOT fix_real STREQUAL expected)
  message(FATAL_ERROR "the refusal names the launcher ${fix}, not ${MPIEXEC}:\n${out}")
endif()
message(STATUS "-DMPIEXEC_EXECUTABLE=${OTHER_MPIEXEC} refused")
