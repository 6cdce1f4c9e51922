// test/pch_donor.cpp — the program whose build compiles the standard and GoogleTest headers once
// for every test program (test/CMakeLists.txt, docs/decisions/131). It runs no test and is not
// registered with CTest.
