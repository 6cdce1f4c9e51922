if(EXISTS "/work/main/test/build/sinew_kb_tests")
  if(NOT EXISTS "/work/main/test/build/sinew_kb_tests[1]_tests.cmake" OR
     NOT "/work/main/test/build/sinew_kb_tests[1]_tests.cmake" IS_NEWER_THAN "/work/main/test/build/sinew_kb_tests" OR
     NOT "/work/main/test/build/sinew_kb_tests[1]_tests.cmake" IS_NEWER_THAN "${CMAKE_CURRENT_LIST_FILE}")
    include("/usr/share/cmake-3.25/Modules/GoogleTestAddTests.cmake")
    gtest_discover_tests_impl(
      TEST_EXECUTABLE [==[/work/main/test/build/sinew_kb_tests]==]
      TEST_EXECUTOR [==[env;XDG_CACHE_HOME=/work/main/test/build/test-cache;SINEW_DEVICES=;SINEW_KB=:memory:;SINEW_QUIET=1]==]
      TEST_WORKING_DIR [==[/work/main/test/build]==]
      TEST_EXTRA_ARGS [==[]==]
      TEST_PROPERTIES [==[LABELS;unit;TIMEOUT;300]==]
      TEST_PREFIX [==[unit.kb.]==]
      TEST_SUFFIX [==[]==]
      TEST_FILTER [==[]==]
      NO_PRETTY_TYPES [==[FALSE]==]
      NO_PRETTY_VALUES [==[FALSE]==]
      TEST_LIST [==[sinew_kb_tests_TESTS]==]
      CTEST_FILE [==[/work/main/test/build/sinew_kb_tests[1]_tests.cmake]==]
      TEST_DISCOVERY_TIMEOUT [==[5]==]
      TEST_XML_OUTPUT_DIR [==[]==]
    )
  endif()
  include("/work/main/test/build/sinew_kb_tests[1]_tests.cmake")
else()
  add_test(sinew_kb_tests_NOT_BUILT sinew_kb_tests_NOT_BUILT)
endif()
