file(REMOVE_RECURSE
  "CMakeFiles/sinew_pocl_tests.dir/pocl/bad_input_test.o"
  "CMakeFiles/sinew_pocl_tests.dir/pocl/bad_input_test.o.d"
  "CMakeFiles/sinew_pocl_tests.dir/pocl/concurrency_test.o"
  "CMakeFiles/sinew_pocl_tests.dir/pocl/concurrency_test.o.d"
  "CMakeFiles/sinew_pocl_tests.dir/pocl/nodes_test.o"
  "CMakeFiles/sinew_pocl_tests.dir/pocl/nodes_test.o.d"
  "CMakeFiles/sinew_pocl_tests.dir/pocl/platform_test.o"
  "CMakeFiles/sinew_pocl_tests.dir/pocl/platform_test.o.d"
  "CMakeFiles/sinew_pocl_tests.dir/pocl/program_cache_test.o"
  "CMakeFiles/sinew_pocl_tests.dir/pocl/program_cache_test.o.d"
  "sinew_pocl_tests"
  "sinew_pocl_tests.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/sinew_pocl_tests.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
