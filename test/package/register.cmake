# Registers the packaging test; include()d from test/CMakeLists.txt. It installs this build into
# a temporary prefix and builds test/package/ against it with find_package(Sinew).
add_test(NAME package.find_package
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/check.sh ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(package.find_package PROPERTIES LABELS unit TIMEOUT 300)
