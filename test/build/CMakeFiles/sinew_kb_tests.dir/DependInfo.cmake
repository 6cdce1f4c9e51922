
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/main/test/kb/kb_test_util.cpp" "CMakeFiles/sinew_kb_tests.dir/kb/kb_test_util.o" "gcc" "CMakeFiles/sinew_kb_tests.dir/kb/kb_test_util.o.d"
  "/work/main/test/unit/kb_interpolate_test.cpp" "CMakeFiles/sinew_kb_tests.dir/unit/kb_interpolate_test.o" "gcc" "CMakeFiles/sinew_kb_tests.dir/unit/kb_interpolate_test.o.d"
  "/work/main/test/unit/kb_json_test.cpp" "CMakeFiles/sinew_kb_tests.dir/unit/kb_json_test.o" "gcc" "CMakeFiles/sinew_kb_tests.dir/unit/kb_json_test.o.d"
  "/work/main/test/unit/kb_open_test.cpp" "CMakeFiles/sinew_kb_tests.dir/unit/kb_open_test.o" "gcc" "CMakeFiles/sinew_kb_tests.dir/unit/kb_open_test.o.d"
  "/work/main/test/unit/kb_process_test.cpp" "CMakeFiles/sinew_kb_tests.dir/unit/kb_process_test.o" "gcc" "CMakeFiles/sinew_kb_tests.dir/unit/kb_process_test.o.d"
  "/work/main/test/unit/kb_schema_test.cpp" "CMakeFiles/sinew_kb_tests.dir/unit/kb_schema_test.o" "gcc" "CMakeFiles/sinew_kb_tests.dir/unit/kb_schema_test.o.d"
  "/work/main/test/unit/kb_store_test.cpp" "CMakeFiles/sinew_kb_tests.dir/unit/kb_store_test.o" "gcc" "CMakeFiles/sinew_kb_tests.dir/unit/kb_store_test.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
