# Empty dependencies file for sinew_multidevice3_tests.
# This may be replaced when dependencies are built.
