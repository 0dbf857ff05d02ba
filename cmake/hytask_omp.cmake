# hytask_omp: the OpenMP companion library (src/omp/, docs/omp.md), one library for both
# OpenMP runtimes: it calls only OpenMP's API (omp_fulfill_event, omp_in_parallel), which
# GCC's libgomp and Clang's libomp both export, and defines ompt_start_tool, which only
# libomp calls. The program's compiler and -fopenmp choose the runtime at link time.
#
# Sets HYTASK_OMP (ON when the library is built) and defines
#   hytask_omp_library(<name> <hytask library>)   the library against one hytask library
#   hytask_clang_openmp_program(<name> SOURCES ... LIBRARIES ... MPI <target>
#                               [INCLUDES ...])    a program built by Clang with libomp
#                               (a direct command: this tree is configured for GCC)
find_package(OpenMP COMPONENTS CXX)
set(HYTASK_OMP OFF)
if(NOT OpenMP_CXX_FOUND)
  message(STATUS "hytask: hytask_omp (OpenMP programs) is not built: OpenMP is missing")
  return()
endif()
set(HYTASK_OMP ON)
set(HYTASK_OMP_BUILT ON CACHE INTERNAL "hytask_omp is a target (tests/install builds it)")

find_program(HYTASK_CLANGXX NAMES clang++ clang++-14 clang++-15 clang++-16)

# OMPT's declarations come with the OpenMP runtime that implements them: Clang's resource
# directory holds omp-tools.h. Copied into the build tree, so that GCC does not see Clang's
# other headers (stddef.h, intrinsics) that live beside it.
set(HYTASK_OMP_TOOLS_H "")
if(HYTASK_CLANGXX)
  execute_process(COMMAND ${HYTASK_CLANGXX} -print-resource-dir OUTPUT_VARIABLE dir
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND EXISTS "${dir}/include/omp-tools.h")
    set(HYTASK_OMP_TOOLS_H "${dir}/include/omp-tools.h")
  endif()
endif()
if(NOT HYTASK_OMP_TOOLS_H)
  find_file(HYTASK_OMP_TOOLS_FOUND omp-tools.h)
  if(HYTASK_OMP_TOOLS_FOUND)
    set(HYTASK_OMP_TOOLS_H "${HYTASK_OMP_TOOLS_FOUND}")
  endif()
endif()
if(HYTASK_OMP_TOOLS_H)
  configure_file(${HYTASK_OMP_TOOLS_H} ${PROJECT_BINARY_DIR}/omp-tools/omp-tools.h COPYONLY)
  message(STATUS "hytask: hytask_omp polls at OpenMP scheduling points through OMPT (${HYTASK_OMP_TOOLS_H})")
else()
  message(STATUS "hytask: hytask_omp is built without OMPT: omp-tools.h is missing (libomp-dev)")
endif()

set(HYTASK_OMP_SOURCES
  ${PROJECT_SOURCE_DIR}/src/omp/commtask.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/fortran.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/fulfill.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/gomp_task_hook.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/layer.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/ompt_tool.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/session_progress.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/session.cpp
  ${PROJECT_SOURCE_DIR}/src/omp/task_priority.cpp
)

function(hytask_omp_library name hytask_lib)
  add_library(${name} ${HYTASK_OMP_SOURCES})
  target_link_libraries(${name} PUBLIC ${hytask_lib} OpenMP::OpenMP_CXX ${CMAKE_DL_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE ${HYTASK_WARNINGS})
  # OMP_MAX_TASK_PRIORITY's default from the executable's .preinit_array, which only a static
  # library can contribute to (src/omp/task_priority.hpp).
  get_target_property(type ${name} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    target_compile_definitions(${name} PRIVATE HYTASK_OMP_PREINIT=1)
  endif()
  if(HYTASK_OMP_TOOLS_H)
    target_include_directories(${name} PRIVATE ${PROJECT_BINARY_DIR}/omp-tools)
    target_compile_definitions(${name} PRIVATE HYTASK_HAVE_OMPT=1)
  endif()
endfunction()

hytask_omp_library(hytask_omp hytask)
add_library(hytask::omp ALIAS hytask_omp)
set_target_properties(hytask_omp PROPERTIES EXPORT_NAME omp)  # hytask::omp when installed
install(TARGETS hytask_omp EXPORT hytaskTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# A program compiled and linked by Clang with libomp, against libraries of this tree built by
# GCC (C++ ABI and libstdc++ are shared): LIBRARIES are targets, linked in the order given
# (hytask_omp before hytask), followed by what a static libhytask needs and MPI (the target
# MPI: MPI::MPI_CXX, or the other MPI's pkg-config target).
function(hytask_clang_openmp_program name)
  cmake_parse_arguments(P "" "MPI" "SOURCES;LIBRARIES;INCLUDES;DEPENDS" ${ARGN})
  if(NOT HYTASK_CLANGXX)
    return()
  endif()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${name})
  # hytask's public headers too: one command compiles every source, without a depfile.
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/*.hpp)
  set(sources "")
  foreach(s ${P_SOURCES})
    list(APPEND sources ${CMAKE_CURRENT_SOURCE_DIR}/${s})
  endforeach()
  set(libs "")
  foreach(l ${P_LIBRARIES})
    list(APPEND libs $<TARGET_FILE:${l}>)
  endforeach()
  set(mpi_inc "$<TARGET_PROPERTY:${P_MPI},INTERFACE_INCLUDE_DIRECTORIES>")
  set(mpi_libs "$<TARGET_PROPERTY:${P_MPI},INTERFACE_LINK_LIBRARIES>")
  set(hwloc_libs "$<TARGET_PROPERTY:PkgConfig::HWLOC,INTERFACE_LINK_LIBRARIES>")
  set(otf2_libs "")
  if(HYTASK_HAVE_OTF2)
    set(otf2_libs ${HYTASK_OTF2_LIBRARY})  # libhytask's OTF2 writer (static library)
  endif()
  set(includes -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_BINARY_DIR}/include)
  foreach(i ${P_INCLUDES})
    list(APPEND includes -I${i})
  endforeach()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${HYTASK_CLANGXX} -O2 ${HYTASK_CLANG_DEBUG_FLAG} -std=c++20 ${HYTASK_WARNINGS} -fopenmp=libomp ${includes}
            "$<$<BOOL:${mpi_inc}>:-isystem$<JOIN:${mpi_inc},;-isystem>>"
            ${sources} ${libs} $<TARGET_LINKER_FILE:Boost::context> ${hwloc_libs} ${otf2_libs} ${mpi_libs}
            -pthread -o ${out}
    DEPENDS ${P_SOURCES} ${P_LIBRARIES} ${P_DEPENDS} ${headers}
    COMMAND_EXPAND_LISTS
    COMMENT "Building ${name} with ${HYTASK_CLANGXX} (libomp)")
  add_custom_target(build_${name} ALL DEPENDS ${out})
endfunction()
