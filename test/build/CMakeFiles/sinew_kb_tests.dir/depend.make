# Empty dependencies file for sinew_kb_tests.
# This may be replaced when dependencies are built.
