# Empty compiler generated dependencies file for sinew_unit_tests.
# This may be replaced when dependencies are built.
