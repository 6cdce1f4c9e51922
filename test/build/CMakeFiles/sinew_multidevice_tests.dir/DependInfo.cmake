
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/test/pocl/multidevice_test.cpp" "CMakeFiles/sinew_multidevice_tests.dir/pocl/multidevice_test.o" "gcc" "CMakeFiles/sinew_multidevice_tests.dir/pocl/multidevice_test.o.d"
  "/work/main/test/pocl/property_test.cpp" "CMakeFiles/sinew_multidevice_tests.dir/pocl/property_test.o" "gcc" "CMakeFiles/sinew_multidevice_tests.dir/pocl/property_test.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
