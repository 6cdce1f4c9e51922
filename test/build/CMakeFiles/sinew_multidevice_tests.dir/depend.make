# Empty dependencies file for sinew_multidevice_tests.
# This may be replaced when dependencies are built.
