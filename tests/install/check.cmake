# Installs hytask into a scratch prefix, then builds and runs a consumer project that only
# knows find_package(hytask) and CMAKE_PREFIX_PATH, and the same programs built with
# pkg-config's flags (hytask.pc), and checks that they run with the MPI hytask was built with.
# One of them makes plain MPI calls in tasks and links the interception library: by its
# CMake target (hytask::mpi_intercept), its pkg-config module (hytask-mpi-intercept) and a
# plain -lhytask_mpi_intercept before hytask's flags; it must be intercepted each time.
#
#   cmake -DWORK_DIR=... -DCONSUMER_DIR=... -DGENERATOR=... -DCXX=... -P check.cmake
#     BUILD_DIR=dir         install this build tree; or
#     SOURCE_TREE=dir       configure hytask from this source tree in WORK_DIR/hytask (tests,
#                           examples and benchmarks off; Debug, for the assertions, without
#                           debug information, which took a third of the compile time;
#                           as unity translation units, which halves the rest: the main
#                           build compiles every file alone), build the library, hytask-info
#                           (and hytask_omp where OpenMP is found) with 2 jobs, and install that
#     CONFIG_ARGS=a|b       more arguments for that configure step ('|'-separated)
#     CONFIGURE_SAYS=regex  what that configure step must print
#     SHARED=ON             the installed library must be shared (libhytask.so), loadable
#                           with dlopen; otherwise static (libhytask.a)
#     MPIEXEC=path          the launcher of hytask's MPI; MPIEXEC_ARGS=a|b its flags
#     MPI_LIB=regex         what `ldd` must show for that MPI (libmpich\.so, libmpi\.so)
#     OTHER_MPI_LIB=regex   what it must not show
#     MPI_BANNER=regex      what MPI_Get_library_version must say (MPICH, Open MPI)
#     SAME_MPI_HINTS=a|b    also configure the consumer with these hints to the same MPI
#     OTHER_MPI_COMPILER=x  also configure it with -DMPI_CXX_COMPILER=x, another MPI: that
#                           must fail with a message naming hytask's MPI
foreach(v WORK_DIR CONSUMER_DIR GENERATOR CXX MPIEXEC MPI_LIB MPI_BANNER)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check.cmake: ${v} is not set")
  endif()
endforeach()
foreach(v CONFIG_ARGS MPIEXEC_ARGS SAME_MPI_HINTS)
  string(REPLACE "|" ";" ${v} "${${v}}")
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out
                  TIMEOUT 600)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

if(DEFINED SOURCE_TREE)
  set(BUILD_DIR ${WORK_DIR}/hytask)
  string(TIMESTAMP t0 "%s")
  run("configuring hytask (${CONFIG_ARGS})"
    ${CMAKE_COMMAND} -S ${SOURCE_TREE} -B ${BUILD_DIR} -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX}
      -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g0 -DCMAKE_UNITY_BUILD=ON -DHYTASK_BUILD_TESTS=OFF -DHYTASK_BUILD_EXAMPLES=OFF
      -DHYTASK_BUILD_BENCH=OFF ${CONFIG_ARGS})
  if(DEFINED CONFIGURE_SAYS AND NOT out MATCHES "${CONFIGURE_SAYS}")
    message(FATAL_ERROR "configuring hytask did not say '${CONFIGURE_SAYS}':\n${out}")
  endif()
  # hytask_omp too where the configure step made it (OpenMP found).
  set(targets hytask hytask_mpi_intercept hytask-info hytask-trace)
  file(STRINGS ${BUILD_DIR}/CMakeCache.txt omp_built REGEX "^HYTASK_OMP_BUILT:INTERNAL=ON")
  if(omp_built)
    list(APPEND targets hytask_omp)
  endif()
  # hytask-model where nlohmann_json was found: cmake --install installs every target it has.
  file(STRINGS ${BUILD_DIR}/CMakeCache.txt model_built REGEX "^HYTASK_MODEL_BUILT:INTERNAL=ON")
  if(model_built)
    list(APPEND targets hytask-model)
  endif()
  run("building hytask" ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${targets} --parallel 2)
  string(TIMESTAMP t1 "%s")
  math(EXPR s "${t1} - ${t0}")
  message(STATUS "configured and built hytask in ${s} s")
endif()
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
if(NOT EXISTS ${prefix}/bin/hytask-info)
  message(FATAL_ERROR "hytask-info was not installed")
endif()
run("the installed hytask-info" ${prefix}/bin/hytask-info)
if(NOT EXISTS ${prefix}/bin/hytask-trace)
  message(FATAL_ERROR "hytask-trace was not installed")
endif()
run("the installed hytask-trace" ${prefix}/bin/hytask-trace --help)
file(STRINGS ${BUILD_DIR}/CMakeCache.txt model_built REGEX "^HYTASK_MODEL_BUILT:INTERNAL=ON")
if(model_built)
  if(NOT EXISTS ${prefix}/bin/hytask-model)
    message(FATAL_ERROR "the build made hytask-model (HYTASK_MODEL_BUILT=ON), but it was not installed")
  endif()
  run("the installed hytask-model" ${prefix}/bin/hytask-model --help)
endif()

file(GLOB_RECURSE installed_libs RELATIVE ${prefix} ${prefix}/lib*/libhytask*)
if(SHARED)
  set(kind "shared")
  set(lib_regex "libhytask\\.so")
else()
  set(kind "static")
  set(lib_regex "libhytask\\.a")
endif()
if(NOT installed_libs MATCHES "${lib_regex}")
  message(FATAL_ERROR "no ${kind} library was installed: ${installed_libs}")
endif()
string(REPLACE "libhytask" "libhytask_mpi_intercept" intercept_regex "${lib_regex}")
if(NOT installed_libs MATCHES "${intercept_regex}")
  message(FATAL_ERROR "no ${kind} interception library was installed: ${installed_libs}")
endif()
message(STATUS "installed: ${installed_libs}")
if(SHARED)
  list(FILTER installed_libs INCLUDE REGEX "libhytask\\.so$")
  # Loadable with dlopen: dependencies linked in, and no thread-local in the initial-exec
  # model (DF_STATIC_TLS), which dlopen can only place while glibc has static TLS to spare.
  run("building the dlopen check" ${CXX} ${CMAKE_CURRENT_LIST_DIR}/dlopen.cpp -o ${WORK_DIR}/dlopen -ldl)
  run("dlopen(${prefix}/${installed_libs})" ${WORK_DIR}/dlopen ${prefix}/${installed_libs})
  run("readelf -d" readelf -d ${prefix}/${installed_libs})
  if(out MATCHES "STATIC_TLS")
    message(FATAL_ERROR "libhytask.so uses the initial-exec TLS model (STATIC_TLS):\n${out}")
  endif()
endif()

# ldd's view of a program: it must load hytask's MPI, and not the other one.
function(check_mpi_linked program)
  run("ldd ${program}" ldd ${program})
  if(NOT out MATCHES "${MPI_LIB}")
    message(FATAL_ERROR "${program} is not linked with hytask's MPI (${MPI_LIB}):\n${out}")
  endif()
  if(DEFINED OTHER_MPI_LIB AND out MATCHES "${OTHER_MPI_LIB}")
    message(FATAL_ERROR "${program} is linked with another MPI (${OTHER_MPI_LIB}):\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# The interception library's consumer: plain MPI_Recv in a task on one worker, which
# completes only if the call was intercepted (the library linked before MPI).
function(run_intercept_consumer program launcher)
  check_mpi_linked(${program})
  run("the interception consumer on 2 ranks" ${launcher} -n 2 ${MPIEXEC_ARGS} ${program})
  if(NOT out MATCHES "intercept: a blocked MPI_Recv let the next task run: ok")
    message(FATAL_ERROR "${program}: MPI_Recv in a task was not intercepted:\n${out}")
  endif()
  message(STATUS "${program}: ${out}")
endfunction()

# Runs the consumer's programs: one without MPI, two on 2 ranks with `launcher`.
function(run_consumer dir launcher)
  run("the consumer" ${dir}/consumer)
  if(NOT out MATCHES "sum 4950")
    message(FATAL_ERROR "the consumer did not run correctly: ${out}")
  endif()
  check_mpi_linked(${dir}/consumer_mpi)
  if(SHARED AND NOT out MATCHES "libhytask\\.so[^ ]* => ${prefix}/")
    message(FATAL_ERROR "${dir}/consumer_mpi does not load the installed libhytask.so:\n${out}")
  endif()
  run("the MPI consumer on 2 ranks" ${launcher} -n 2 ${MPIEXEC_ARGS} ${dir}/consumer_mpi)
  if(NOT out MATCHES "ranks 2, sum 3: ok; MPI: ${MPI_BANNER}")
    message(FATAL_ERROR "the MPI consumer did not run with hytask's MPI (${MPI_BANNER}):\n${out}")
  endif()
  message(STATUS "${dir}: ${out}")
  run_intercept_consumer(${dir}/consumer_intercept ${launcher})
endfunction()

# The consumer with CMAKE_PREFIX_PATH only: the package brings its MPI, and its launcher.
run("configuring the consumer with find_package(hytask)"
  ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix})
run("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
file(STRINGS ${WORK_DIR}/consumer/CMakeCache.txt launcher REGEX "^MPIEXEC_EXECUTABLE:")
string(REGEX REPLACE "^[^=]*=" "" launcher "${launcher}")
file(REAL_PATH "${launcher}" launcher_real)
file(REAL_PATH "${MPIEXEC}" mpiexec_real)
if(NOT launcher_real STREQUAL mpiexec_real)
  message(FATAL_ERROR "the consumer found the launcher ${launcher}, not hytask's ${MPIEXEC}")
endif()
run_consumer(${WORK_DIR}/consumer ${launcher})

# hytask::omp: installed with the library when OpenMP was found; then the consumer builds an
# OpenMP program against it, which runs on 2 ranks. Whether it was found is the build's
# cache's to say (HYTASK_OMP_BUILT, set by cmake/hytask_omp.cmake), in both modes: an install
# that stops installing the library fails here instead of skipping the OpenMP consumer, and
# so does an installed library the cache does not account for (the variable renamed: this
# check would otherwise never fire).
file(STRINGS ${BUILD_DIR}/CMakeCache.txt omp_built REGEX "^HYTASK_OMP_BUILT:INTERNAL=ON")
file(GLOB_RECURSE omp_libs ${prefix}/lib*/libhytask_omp*)
if(omp_built AND NOT omp_libs)
  file(GLOB_RECURSE all_libs RELATIVE ${prefix} ${prefix}/lib*/libhytask*)
  message(FATAL_ERROR "the build made hytask_omp (HYTASK_OMP_BUILT=ON in "
                      "${BUILD_DIR}/CMakeCache.txt), but the install has no libhytask_omp: "
                      "${all_libs}")
endif()
if(omp_libs AND NOT omp_built)
  message(FATAL_ERROR "libhytask_omp is installed (${omp_libs}), but ${BUILD_DIR}/CMakeCache.txt "
                      "has no HYTASK_OMP_BUILT=ON: this check no longer knows when to expect it")
endif()
if(omp_libs)
  if(NOT EXISTS ${WORK_DIR}/consumer/consumer_omp)
    message(FATAL_ERROR "hytask_omp is installed (${omp_libs}) but the consumer found no hytask::omp")
  endif()
  run("the OpenMP consumer on 2 ranks" ${launcher} -n 2 ${MPIEXEC_ARGS} ${WORK_DIR}/consumer/consumer_omp)
  if(NOT out MATCHES "omp consumer: ok")
    message(FATAL_ERROR "the OpenMP consumer did not run correctly:\n${out}")
  endif()
  message(STATUS "hytask::omp: ${out}")
endif()

# A consumer that names the same MPI itself is fine.
if(SAME_MPI_HINTS)
  run("configuring the consumer with ${SAME_MPI_HINTS}"
    ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer_hinted -G ${GENERATOR}
      -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix} ${SAME_MPI_HINTS})
  run("building the hinted consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/consumer_hinted)
  run_consumer(${WORK_DIR}/consumer_hinted ${MPIEXEC})
endif()

# A Makefile's view: the compile and link lines from pkg-config only (hytask.pc).
file(GLOB_RECURSE pc_file ${prefix}/*/hytask.pc)
if(NOT pc_file)
  message(FATAL_ERROR "hytask.pc was not installed")
endif()
get_filename_component(pc_dir "${pc_file}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
run("pkg-config --cflags hytask" pkg-config --cflags hytask)
separate_arguments(pc_cflags UNIX_COMMAND "${out}")
run("pkg-config --libs hytask" pkg-config --libs hytask)
separate_arguments(pc_libs UNIX_COMMAND "${out}")
message(STATUS "pkg-config: ${pc_cflags} ... ${pc_libs}")
set(rpath "")
if(SHARED)
  get_filename_component(libdir "${pc_dir}" DIRECTORY)
  set(rpath "-Wl,-rpath,${libdir}")  # a prefix outside ld.so's search path
endif()
file(MAKE_DIRECTORY ${WORK_DIR}/pkgconfig)
foreach(program consumer:main.cpp consumer_mpi:mpi.cpp)
  string(REPLACE ":" ";" program "${program}")
  list(GET program 0 name)
  list(GET program 1 source)
  run("compiling and linking ${source} with pkg-config's flags"
    ${CXX} -std=c++20 ${pc_cflags} ${CONSUMER_DIR}/${source} -o ${WORK_DIR}/pkgconfig/${name}
      ${pc_libs} ${rpath})
endforeach()
# The interception library: its own module, whose -l comes first...
run("pkg-config --libs hytask-mpi-intercept" pkg-config --libs hytask-mpi-intercept)
separate_arguments(pc_intercept_libs UNIX_COMMAND "${out}")
if(NOT out MATCHES "-lhytask_mpi_intercept .*-lhytask ")
  message(FATAL_ERROR "pkg-config --libs hytask-mpi-intercept does not put -lhytask_mpi_intercept before -lhytask: ${out}")
endif()
run("compiling and linking intercept.cpp with pkg-config's flags (hytask-mpi-intercept)"
  ${CXX} -std=c++20 ${pc_cflags} ${CONSUMER_DIR}/intercept.cpp -o ${WORK_DIR}/pkgconfig/consumer_intercept
    ${pc_intercept_libs} ${rpath})
# ... or a plain -lhytask_mpi_intercept before hytask's flags, as a Makefile would write it.
get_filename_component(pc_libdir "${pc_dir}" DIRECTORY)
run("compiling and linking intercept.cpp with -lhytask_mpi_intercept"
  ${CXX} -std=c++20 ${pc_cflags} ${CONSUMER_DIR}/intercept.cpp -o ${WORK_DIR}/pkgconfig/consumer_intercept_l
    -L${pc_libdir} -lhytask_mpi_intercept ${pc_libs} ${rpath})
run_consumer(${WORK_DIR}/pkgconfig ${MPIEXEC})
run_intercept_consumer(${WORK_DIR}/pkgconfig/consumer_intercept_l ${MPIEXEC})

# One that asks for another MPI is refused at configure time, with a reason.
if(OTHER_MPI_COMPILER)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer_other
                    -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix}
                    -DMPI_CXX_COMPILER=${OTHER_MPI_COMPILER}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out TIMEOUT 300)
  if(rc EQUAL 0 OR NOT out MATCHES "hytask was built with")
    message(FATAL_ERROR "a consumer with -DMPI_CXX_COMPILER=${OTHER_MPI_COMPILER} was not "
                        "refused with a reason (${rc}):\n${out}")
  endif()
endif()
