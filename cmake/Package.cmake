# The package: headers, libsinew and its exported target for find_package(Sinew) (installed and
# from the build tree), sinew.pc for pkg-config, and CPack's Debian package. Included from the
# top-level CMakeLists.txt after lib/ and tools/.

# The components a program may ask for, find_package(Sinew COMPONENTS MPI): those this build has.
set(SINEW_COMPONENTS "")
if(SINEW_MPI)
  list(APPEND SINEW_COMPONENTS MPI)
endif()

if(SINEW_MPI)
  install(DIRECTORY include/sinew DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN "*.in" EXCLUDE)
else()
  install(DIRECTORY include/sinew DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN "*.in" EXCLUDE
          PATTERN "cluster.hpp" EXCLUDE)
endif()
install(FILES ${PROJECT_BINARY_DIR}/include/sinew/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sinew)

# find_package(Sinew): the installed tree, and this build tree (-DSinew_DIR=<build>).
install(EXPORT SinewTargets NAMESPACE sinew:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Sinew)
export(EXPORT SinewTargets NAMESPACE sinew:: FILE ${PROJECT_BINARY_DIR}/SinewTargets.cmake)
get_target_property(_sinew_type sinew TYPE)
if(_sinew_type STREQUAL "STATIC_LIBRARY")
  set(SINEW_PACKAGE_STATIC ON)
else()
  set(SINEW_PACKAGE_STATIC OFF)
endif()
configure_package_config_file(cmake/SinewConfig.cmake.in ${PROJECT_BINARY_DIR}/SinewConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Sinew)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/SinewConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/SinewConfig.cmake ${PROJECT_BINARY_DIR}/SinewConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Sinew)

# sinew.pc: paths relative to the file itself, so the package works wherever it is installed
# (a scratch root, /usr from the .deb). A static libsinew lists its own dependencies as private.
file(RELATIVE_PATH SINEW_PC_PREFIX "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
string(REGEX REPLACE "/$" "" SINEW_PC_PREFIX "${SINEW_PC_PREFIX}")
# The libraries by name, not as Requires.private: hwloc.pc's own static list names libraries a
# -dev install does not bring (libudev), and libsinew needs none of theirs.
set(SINEW_PC_REQUIRES_PRIVATE "")
set(SINEW_PC_LIBS_PRIVATE "-Wl,--undefined=sinew_link_registrations -lclblast -lclFFT -lsqlite3 -lhwloc -lpthread")
set(SINEW_PC_CFLAGS "-DCL_TARGET_OPENCL_VERSION=120")
if(SINEW_MPI)
  set(SINEW_PC_REQUIRES_PRIVATE "mpi-c")
  string(APPEND SINEW_PC_CFLAGS " -DSINEW_HAS_MPI=1")
endif()
configure_file(cmake/sinew.pc.in ${PROJECT_BINARY_DIR}/sinew.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sinew.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# cpack -G DEB: one package with the library, the headers, the CMake and pkg-config files and,
# where built, the command line with its man page and bash completion.
if(PROJECT_IS_TOP_LEVEL)
  set(CPACK_GENERATOR DEB)
  set(CPACK_PACKAGE_NAME sinew)
  set(CPACK_PACKAGE_VENDOR "Sinew")
  set(CPACK_PACKAGE_CONTACT "Sinew maintainers <sinew@localhost>")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Nested OpenCL skeleton trees on every CPU and GPU at once")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
  # Shared libraries from dpkg-shlibdeps; what a program building against Sinew needs besides.
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/lib)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "ocl-icd-opencl-dev | opencl-dev, opencl-clhpp-headers, pkg-config")
  if(SINEW_PACKAGE_STATIC)
    string(APPEND CPACK_DEBIAN_PACKAGE_DEPENDS ", libclblast-dev, libclfft-dev, libsqlite3-dev, libhwloc-dev")
  endif()
  include(CPack)
endif()
