file(REMOVE_RECURSE
  "CMakeFiles/sinew_multidevice3_tests.dir/pocl/multidevice_test.o"
  "CMakeFiles/sinew_multidevice3_tests.dir/pocl/multidevice_test.o.d"
  "CMakeFiles/sinew_multidevice3_tests.dir/pocl/property_test.o"
  "CMakeFiles/sinew_multidevice3_tests.dir/pocl/property_test.o.d"
  "sinew_multidevice3_tests"
  "sinew_multidevice3_tests.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/sinew_multidevice3_tests.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
