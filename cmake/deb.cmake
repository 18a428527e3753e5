# The Debian packages (`make deb`, CPack): runlab (the command, its man pages, completion
# and data), librunlab<ABI> (the shared library), librunlab-dev (headers, static library,
# runlab.pc, the CMake package) and, when the Python package is built, python3-runlab. Runtime dependencies are computed by dpkg-shlibdeps; the
# -dev package names the -dev packages of the libraries runlab.pc and runlabConfig.cmake ask
# pkg-config for (nothing computes those).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME runlab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "runlab maintainers <runlab@lab.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(RL_DEB_COMPONENTS runlab lib dev)
if(TARGET runlab_python)
  list(APPEND RL_DEB_COMPONENTS python)
endif()
set(CPACK_COMPONENTS_ALL ${RL_DEB_COMPONENTS})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/runlab/runlab")
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

set(CPACK_DEBIAN_RUNLAB_PACKAGE_NAME runlab)
set(CPACK_DEBIAN_RUNLAB_PACKAGE_SECTION science)
# Each description: the synopsis line, then the extended text (CPack indents it).
set(CPACK_COMPONENT_RUNLAB_DESCRIPTION "record, replay, benchmark and evaluate robotics lab runs
The runlab command: records lab experiments over Cyclone DDS into MCAP runs,
evaluates them offline, benchmarks motion planners in isolated runs and draws
figures. With man pages, bash completion and the lab map.")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME librunlab${RUNLAB_ABI_VERSION})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
# The ldconfig trigger Debian policy 8.1.1 asks of a shared library package.
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/debian/librunlab/triggers)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_COMPONENT_LIB_DESCRIPTION "runlab library: MCAP, recording, benchmarking, evaluation
librunlab, the C library behind the runlab command: MCAP reading and writing,
run recording, planner benchmarking and offline evaluation of lab runs.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME librunlab-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DEPENDS lib)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libzstd-dev, liblz4-dev, libdeflate-dev, zlib1g-dev, libssl-dev, libjson-c-dev, libfyaml-dev, libsqlite3-dev, libcairo2-dev, libexpat1-dev, cyclonedds-dev, pkg-config")
set(CPACK_COMPONENT_DEV_DESCRIPTION "runlab library: development files
Headers, static library, pkg-config file (runlab.pc) and CMake package
(find_package(runlab) gives runlab::runlab and runlab::runlab_static)
of librunlab.")

# The extension module links librunlab statically (so the package does not need librunlab's
# exact ABI); dpkg-shlibdeps adds the C libraries, this line the interpreter it was built for
# (one minor version, as Debian's own python3-* extension packages) and what the modules import.
set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-runlab)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
# numpy's C ABI and the oldest numpy of its API, as Debian's dh_numpy3 writes them (read from
# the file it reads; without it, plain python3-numpy).
set(rl_numpy_depends "python3-numpy")
if(EXISTS /usr/share/numpy3/versions)
  file(STRINGS /usr/share/numpy3/versions rl_numpy_abi REGEX "^abi [0-9]+$")
  file(STRINGS /usr/share/numpy3/versions rl_numpy_min REGEX "^api-min-version ")
  string(REGEX REPLACE "^abi " "" rl_numpy_abi "${rl_numpy_abi}")
  string(REGEX REPLACE "^api-min-version " "" rl_numpy_min "${rl_numpy_min}")
  if(rl_numpy_abi AND rl_numpy_min)
    set(rl_numpy_depends "python3-numpy (>= ${rl_numpy_min}), python3-numpy-abi${rl_numpy_abi}")
  endif()
endif()
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS
    "python3 (>= ${RL_PYTHON_VERSION}), python3 (<< ${RL_PYTHON_VERSION_NEXT}), ${rl_numpy_depends}, python3-pandas")
set(CPACK_COMPONENT_PYTHON_DESCRIPTION "runlab for Python: runs, benchmarks, recordings in numpy and pandas
The runlab package for Python 3: load per-cycle runs, benchmark results,
MCAP recordings and lab evaluations into numpy arrays and pandas DataFrames,
through librunlab's own readers (a C extension module).")

# Every package carries its copyright file and changelog (Debian policy 12.5, 12.7).
configure_file(${CMAKE_CURRENT_LIST_DIR}/debian/changelog.in ${CMAKE_BINARY_DIR}/generated/debian/changelog @ONLY)
execute_process(COMMAND gzip -9nf ${CMAKE_BINARY_DIR}/generated/debian/changelog)
foreach(comp ${RL_DEB_COMPONENTS})
  string(TOUPPER ${comp} COMP)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/copyright ${CMAKE_BINARY_DIR}/generated/debian/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_${COMP}_PACKAGE_NAME} COMPONENT ${comp})
endforeach()

include(CPack)
