file(REMOVE_RECURSE
  "CMakeFiles/sinew_kb_tests.dir/kb/kb_test_util.o"
  "CMakeFiles/sinew_kb_tests.dir/kb/kb_test_util.o.d"
  "CMakeFiles/sinew_kb_tests.dir/unit/kb_interpolate_test.o"
  "CMakeFiles/sinew_kb_tests.dir/unit/kb_interpolate_test.o.d"
  "CMakeFiles/sinew_kb_tests.dir/unit/kb_json_test.o"
  "CMakeFiles/sinew_kb_tests.dir/unit/kb_json_test.o.d"
  "CMakeFiles/sinew_kb_tests.dir/unit/kb_open_test.o"
  "CMakeFiles/sinew_kb_tests.dir/unit/kb_open_test.o.d"
  "CMakeFiles/sinew_kb_tests.dir/unit/kb_process_test.o"
  "CMakeFiles/sinew_kb_tests.dir/unit/kb_process_test.o.d"
  "CMakeFiles/sinew_kb_tests.dir/unit/kb_schema_test.o"
  "CMakeFiles/sinew_kb_tests.dir/unit/kb_schema_test.o.d"
  "CMakeFiles/sinew_kb_tests.dir/unit/kb_store_test.o"
  "CMakeFiles/sinew_kb_tests.dir/unit/kb_store_test.o.d"
  "sinew_kb_tests"
  "sinew_kb_tests.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/sinew_kb_tests.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
