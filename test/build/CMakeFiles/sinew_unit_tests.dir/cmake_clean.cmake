file(REMOVE_RECURSE
  "CMakeFiles/sinew_unit_tests.dir/unit/decompose_test.o"
  "CMakeFiles/sinew_unit_tests.dir/unit/decompose_test.o.d"
  "CMakeFiles/sinew_unit_tests.dir/unit/fission_test.o"
  "CMakeFiles/sinew_unit_tests.dir/unit/fission_test.o.d"
  "CMakeFiles/sinew_unit_tests.dir/unit/parse_test.o"
  "CMakeFiles/sinew_unit_tests.dir/unit/parse_test.o.d"
  "CMakeFiles/sinew_unit_tests.dir/unit/select_test.o"
  "CMakeFiles/sinew_unit_tests.dir/unit/select_test.o.d"
  "CMakeFiles/sinew_unit_tests.dir/unit/train_test.o"
  "CMakeFiles/sinew_unit_tests.dir/unit/train_test.o.d"
  "CMakeFiles/sinew_unit_tests.dir/unit/tree_test.o"
  "CMakeFiles/sinew_unit_tests.dir/unit/tree_test.o.d"
  "CMakeFiles/sinew_unit_tests.dir/unit/validate_test.o"
  "CMakeFiles/sinew_unit_tests.dir/unit/validate_test.o.d"
  "sinew_unit_tests"
  "sinew_unit_tests.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/sinew_unit_tests.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
