# What a C or CMake user, and a Debian user, expects of an installed runlab beyond the
# binaries: runlab.pc, the CMake package (runlab::runlab, runlab::runlab_static), man pages
# and bash completion; the Debian packages (CPack) come from cmake/deb.cmake, included by the
# top-level CMakeLists.txt once every component (the Python package's too) is known.
include(CMakePackageConfigHelpers)

# pkg-config: relocatable (prefix from the .pc file's own place), so `cmake --install
# --prefix P` and DESTDIR both give a file that points at its own tree; for /usr (the
# Debian packages) the plain /usr, so pkg-config drops the system -L and -I as usual.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(RL_PC_PREFIX /usr)
else()
  file(RELATIVE_PATH RL_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
  string(REGEX REPLACE "/$" "" RL_PC_TO_PREFIX "${RL_PC_TO_PREFIX}")
  set(RL_PC_PREFIX "\${pcfiledir}/${RL_PC_TO_PREFIX}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/runlab.pc.in ${CMAKE_BINARY_DIR}/generated/runlab.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/generated/runlab.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# CMake: find_package(runlab 0.2 CONFIG REQUIRED). Same major version, minor at least as asked.
set(RL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/runlab)
install(EXPORT runlabTargets NAMESPACE runlab:: DESTINATION ${RL_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/runlabConfig.cmake.in
  ${CMAKE_BINARY_DIR}/generated/runlabConfig.cmake INSTALL_DESTINATION ${RL_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/generated/runlabConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/generated/runlabConfig.cmake
              ${CMAKE_BINARY_DIR}/generated/runlabConfigVersion.cmake
        DESTINATION ${RL_CMAKE_DIR} COMPONENT dev)

# Man pages (runlab(1), runlab-<command>(1)) and bash completion, written from the built
# command's own --help at build time (scripts/gen_cli_docs.py), so they never disagree.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(RL_CLI_DOCS ${CMAKE_BINARY_DIR}/generated/cli-docs)
add_custom_command(OUTPUT ${RL_CLI_DOCS}/stamp
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/gen_cli_docs.py $<TARGET_FILE:runlab> ${RL_CLI_DOCS}
  DEPENDS runlab ${CMAKE_SOURCE_DIR}/scripts/gen_cli_docs.py
  COMMENT "Writing man pages and bash completion from runlab --help")
add_custom_target(runlab_cli_docs ALL DEPENDS ${RL_CLI_DOCS}/stamp)
install(DIRECTORY ${RL_CLI_DOCS}/man1 DESTINATION ${CMAKE_INSTALL_MANDIR} COMPONENT runlab)
install(FILES ${RL_CLI_DOCS}/completion/runlab
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT runlab)

