# Registers a GoogleTest binary's tests with ctest, one ctest test per test suite (a process
# runs the suite's tests; gtest names the one that fails), at ctest time: ctest includes this
# file (TEST_INCLUDE_FILES) after setting
#   BINARY   the test binary          PREFIX   the ctest name prefix (e.g. "tsan.")
#   LABELS   the suites' labels       TIMEOUT  per suite, in seconds
#   TIMING   a regex of the tests that measure time or CPU: each runs alone, by itself
#            (RUN_SERIAL, label timing)
#   HEAVY    a regex of the tests that keep every core busy: each by itself, on 2 cores
# A process per suite instead of per test: starting a sanitizer binary costs more than most
# of its tests (ASan: 27 s of 35 over 418 tests), and the suites still spread over the cores.
if(NOT EXISTS "${BINARY}")
  add_test("${PREFIX}NOT_BUILT" "${BINARY}")  # fails, naming the binary
  return()
endif()
execute_process(COMMAND "${BINARY}" --gtest_list_tests OUTPUT_VARIABLE listing
                RESULT_VARIABLE status TIMEOUT 120)
if(NOT status EQUAL 0)
  add_test("${PREFIX}LIST_FAILED" "${BINARY}" --gtest_list_tests)
  return()
endif()
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #]+)\\.")  # "Threads/Deps.  # TypeParam = ..."
    set(suite "${CMAKE_MATCH_1}")
    list(APPEND suites "${suite}")
    set(rest_${suite} "")
    set(alone_${suite} "")
  elseif(line MATCHES "^  ([^ ]+)")  # "  Name/1  # GetParam() = 1"
    set(test "${suite}.${CMAKE_MATCH_1}")
    if(test MATCHES "${TIMING}")
      add_test("${PREFIX}${test}" "${BINARY}" "--gtest_filter=${test}")
      set_tests_properties("${PREFIX}${test}" PROPERTIES RUN_SERIAL TRUE TIMEOUT ${TIMEOUT}
        LABELS "${LABELS};timing" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\] 1 test")
      list(APPEND alone_${suite} "${test}")
    elseif(test MATCHES "${HEAVY}")
      add_test("${PREFIX}${test}" "${BINARY}" "--gtest_filter=${test}")
      set_tests_properties("${PREFIX}${test}" PROPERTIES PROCESSORS 2 TIMEOUT ${TIMEOUT}
        LABELS "${LABELS}" SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\] 1 test")
      list(APPEND alone_${suite} "${test}")
    else()
      list(APPEND rest_${suite} "${test}")
    endif()
  endif()
endforeach()
foreach(suite IN LISTS suites)
  if(rest_${suite})
    set(filter "${suite}.*")
    if(alone_${suite})
      list(JOIN alone_${suite} ":" alone)
      string(APPEND filter "-${alone}")
    endif()
    add_test("${PREFIX}${suite}" "${BINARY}" "--gtest_filter=${filter}")
    set_tests_properties("${PREFIX}${suite}" PROPERTIES TIMEOUT ${TIMEOUT} LABELS "${LABELS}")
  endif()
endforeach()
