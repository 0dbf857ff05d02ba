# Fails when tests/mpi/CMakeLists.txt's HYTASK_MPI_SCENARIOS and the scenarios the program
# knows (`scenarios --list`) differ: a scenario missing from the list would never run.
# EXPECTED: the list, comma-separated.
execute_process(COMMAND ${PROGRAM} --list OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} --list failed (${rc})")
endif()
string(STRIP "${out}" out)
string(REPLACE "\n" ";" actual "${out}")
list(SORT actual)
string(REPLACE "," ";" expected "${EXPECTED}")
list(SORT expected)
if(NOT actual STREQUAL expected)
  message(FATAL_ERROR "the program's scenarios:\n  ${actual}\n"
                      "HYTASK_MPI_SCENARIOS in tests/mpi/CMakeLists.txt:\n  ${expected}\n"
                      "add the missing ones to the list")
endif()
