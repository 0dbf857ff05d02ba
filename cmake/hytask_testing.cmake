# How hytask registers its tests (DEVELOPERS.md, "Tests"): tiers, exit statuses, labels.
#
# Tiers. The default tier (scripts/test.sh, CI) covers every feature on both MPIs, every
# sanitizer on the core and one job per scenario group. HYTASK_FULL_TESTS=ON
# (scripts/test.sh --full) also builds and registers the full matrix: every mode x progress
# policy x worker count, the per-scenario splits of jobs the default tier runs whole, the
# apps' shape sweeps, ThreadSanitizer on the other MPI, installs from scratch. Those tests
# carry the label `full`, so `ctest -LE full` in such a tree runs the default tier.
option(HYTASK_FULL_TESTS "Also build and register the full test matrix (label full)" OFF)

# hytask_add_test(<name> COMMAND <command>...
#                 [EXPECT <regex>]           output must match (PASS_REGULAR_EXPRESSION)
#                 [FORBID <regex>...]        output must not match
#                 [STATUS <n>|nonzero]       the exit status required (default 0)
#                 [FULL]                     full tier only (label full)
#                 [QUICK]                    in the smoke set (label quick)
#                 [SERIAL]                   measures time or CPU: runs alone (RUN_SERIAL,
#                                            label timing)
#                 [LABELS <label>...] [PROCESSORS <n>] [TIMEOUT <s>] [ENVIRONMENT <v=x>...]
#                 [RESOURCE_LOCK <name>] [SKIP_RETURN_CODE <n>] [DEPENDS <test>...])
# A regex cannot hold a `;` (CMake would split it at the call): write `.` instead.
# A test passes only on the exit status required *and* the expected output: with EXPECT, or
# a STATUS other than 0, the command runs through tests/check_exit.sh, whose mismatch line
# fails the test (ctest alone would ignore the status of a test with an EXPECT); a
# SKIP_RETURN_CODE passes through it.
function(hytask_add_test name)
  cmake_parse_arguments(T "FULL;QUICK;SERIAL"
    "EXPECT;STATUS;PROCESSORS;TIMEOUT;RESOURCE_LOCK;SKIP_RETURN_CODE"
    "COMMAND;FORBID;LABELS;ENVIRONMENT;DEPENDS" ${ARGN})
  if(T_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hytask_add_test(${name}): unknown arguments ${T_UNPARSED_ARGUMENTS}")
  endif()
  if(T_FULL AND NOT HYTASK_FULL_TESTS)
    return()
  endif()
  if(NOT DEFINED T_STATUS OR T_STATUS STREQUAL "")
    set(T_STATUS 0)
  endif()
  # An executable target named first is its file, as add_test would make it (it no longer
  # comes first once wrapped).
  list(GET T_COMMAND 0 program)
  if(TARGET ${program})
    list(REMOVE_AT T_COMMAND 0)
    list(PREPEND T_COMMAND $<TARGET_FILE:${program}>)
  endif()
  set(command ${T_COMMAND})
  set(forbid ${T_FORBID})
  if(DEFINED T_EXPECT OR NOT T_STATUS STREQUAL "0")
    set(skip)
    if(DEFINED T_SKIP_RETURN_CODE AND NOT T_SKIP_RETURN_CODE STREQUAL "")
      set(skip --skip ${T_SKIP_RETURN_CODE})
    endif()
    set(command ${HYTASK_CHECK_EXIT} ${skip} ${T_STATUS} ${T_COMMAND})
    list(APPEND forbid "check_exit: exit status")
  endif()
  add_test(NAME ${name} COMMAND ${command})
  set(labels ${T_LABELS})
  if(T_FULL)
    list(APPEND labels full)
  endif()
  if(T_QUICK)
    list(APPEND labels quick)
  endif()
  if(T_SERIAL)
    list(APPEND labels timing)
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
  endif()
  if(labels)
    set_tests_properties(${name} PROPERTIES LABELS "${labels}")
  endif()
  if(DEFINED T_EXPECT)
    set_tests_properties(${name} PROPERTIES PASS_REGULAR_EXPRESSION "${T_EXPECT}")
  endif()
  if(forbid)
    set_tests_properties(${name} PROPERTIES FAIL_REGULAR_EXPRESSION "${forbid}")
  endif()
  if(T_ENVIRONMENT)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${T_ENVIRONMENT}")
  endif()
  if(T_DEPENDS)
    set_tests_properties(${name} PROPERTIES DEPENDS "${T_DEPENDS}")
  endif()
  foreach(p PROCESSORS TIMEOUT RESOURCE_LOCK SKIP_RETURN_CODE)
    if(DEFINED T_${p} AND NOT T_${p} STREQUAL "")
      set_tests_properties(${name} PROPERTIES ${p} "${T_${p}}")
    endif()
  endforeach()
endfunction()
set(HYTASK_CHECK_EXIT ${PROJECT_SOURCE_DIR}/tests/check_exit.sh)

# hytask_cli_tests(<program target> [ARGS <words>...]): the program's command line follows
# tools/cli/command_line.hpp: --help prints its usage line and exits with 0; an unknown
# option is a usage error (status 2) that names it and points at --help. ARGS come first
# (a subcommand).
function(hytask_cli_tests program)
  cmake_parse_arguments(C "" "" "ARGS" ${ARGN})
  get_target_property(shown ${program} OUTPUT_NAME)
  if(NOT shown)
    set(shown ${program})
  endif()
  hytask_add_test(cli.${program}.help COMMAND $<TARGET_FILE:${program}> ${C_ARGS} --help
    EXPECT "usage: ${shown}" LABELS tools cli)
  hytask_add_test(cli.${program}.unknown_option COMMAND $<TARGET_FILE:${program}> ${C_ARGS} --no-such-option
    STATUS 2 EXPECT "unknown option '--no-such-option'\nrun '${shown}" LABELS tools cli)
endfunction()
