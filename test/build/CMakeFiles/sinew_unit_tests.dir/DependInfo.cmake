
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/test/unit/decompose_test.cpp" "CMakeFiles/sinew_unit_tests.dir/unit/decompose_test.o" "gcc" "CMakeFiles/sinew_unit_tests.dir/unit/decompose_test.o.d"
  "/work/main/test/unit/fission_test.cpp" "CMakeFiles/sinew_unit_tests.dir/unit/fission_test.o" "gcc" "CMakeFiles/sinew_unit_tests.dir/unit/fission_test.o.d"
  "/work/main/test/unit/parse_test.cpp" "CMakeFiles/sinew_unit_tests.dir/unit/parse_test.o" "gcc" "CMakeFiles/sinew_unit_tests.dir/unit/parse_test.o.d"
  "/work/main/test/unit/select_test.cpp" "CMakeFiles/sinew_unit_tests.dir/unit/select_test.o" "gcc" "CMakeFiles/sinew_unit_tests.dir/unit/select_test.o.d"
  "/work/main/test/unit/train_test.cpp" "CMakeFiles/sinew_unit_tests.dir/unit/train_test.o" "gcc" "CMakeFiles/sinew_unit_tests.dir/unit/train_test.o.d"
  "/work/main/test/unit/tree_test.cpp" "CMakeFiles/sinew_unit_tests.dir/unit/tree_test.o" "gcc" "CMakeFiles/sinew_unit_tests.dir/unit/tree_test.o.d"
  "/work/main/test/unit/validate_test.cpp" "CMakeFiles/sinew_unit_tests.dir/unit/validate_test.o" "gcc" "CMakeFiles/sinew_unit_tests.dir/unit/validate_test.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
