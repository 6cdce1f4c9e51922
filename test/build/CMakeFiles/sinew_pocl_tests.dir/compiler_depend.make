# Empty compiler generated dependencies file for sinew_pocl_tests.
# This may be replaced when dependencies are built.
