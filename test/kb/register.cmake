# Knowledge-base tests (lib/kb, tools' `sinew kb`): label `unit` — SQLite on temporary files, child
# processes through fork(), no OpenCL device. Included from test/CMakeLists.txt, so paths are
# relative to test/ and sinew_test() is the one defined there.
sinew_test(sinew_kb_tests unit PREFIX "unit.kb."
  SOURCES unit/kb_schema_test.cpp unit/kb_store_test.cpp unit/kb_open_test.cpp unit/kb_process_test.cpp
          unit/kb_interpolate_test.cpp unit/kb_json_test.cpp unit/kb_migrate_test.cpp
  LIBS SQLite::SQLite3 sinew_test_kb_util)
target_compile_definitions(sinew_kb_tests PRIVATE SINEW_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

if(TARGET sinew_cli)
  sinew_test(sinew_kb_cli_tests unit PREFIX "unit.kb."
    SOURCES unit/kb_cli_test.cpp LIBS sinew_test_kb_util)
  target_compile_definitions(sinew_kb_cli_tests PRIVATE SINEW_CLI="$<TARGET_FILE:sinew_cli>")
  add_dependencies(sinew_kb_cli_tests sinew_cli)
endif()
