file(REMOVE_RECURSE
  "CMakeFiles/sinew_cache_builder.dir/pocl/cache_builder.o"
  "CMakeFiles/sinew_cache_builder.dir/pocl/cache_builder.o.d"
  "sinew_cache_builder"
  "sinew_cache_builder.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/sinew_cache_builder.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
