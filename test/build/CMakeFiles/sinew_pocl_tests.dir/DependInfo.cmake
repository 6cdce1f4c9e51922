
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/test/pocl/bad_input_test.cpp" "CMakeFiles/sinew_pocl_tests.dir/pocl/bad_input_test.o" "gcc" "CMakeFiles/sinew_pocl_tests.dir/pocl/bad_input_test.o.d"
  "/work/main/test/pocl/concurrency_test.cpp" "CMakeFiles/sinew_pocl_tests.dir/pocl/concurrency_test.o" "gcc" "CMakeFiles/sinew_pocl_tests.dir/pocl/concurrency_test.o.d"
  "/work/main/test/pocl/nodes_test.cpp" "CMakeFiles/sinew_pocl_tests.dir/pocl/nodes_test.o" "gcc" "CMakeFiles/sinew_pocl_tests.dir/pocl/nodes_test.o.d"
  "/work/main/test/pocl/platform_test.cpp" "CMakeFiles/sinew_pocl_tests.dir/pocl/platform_test.o" "gcc" "CMakeFiles/sinew_pocl_tests.dir/pocl/platform_test.o.d"
  "/work/main/test/pocl/program_cache_test.cpp" "CMakeFiles/sinew_pocl_tests.dir/pocl/program_cache_test.o" "gcc" "CMakeFiles/sinew_pocl_tests.dir/pocl/program_cache_test.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
