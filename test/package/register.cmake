# Registers the packaging tests; include()d from test/CMakeLists.txt. Each builds test/package/
# against this build as a user would find it (check.sh says how): installed into a scratch
# prefix (with pkg-config, and the components this build lacks refused), from the build tree,
# and from the .deb that cpack makes (where the command line, its man page and completion are
# built: not in the sanitizer pass, which builds only what its tests need).
add_test(NAME package.find_package
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/check.sh install ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_LIST_DIR})
add_test(NAME package.build_tree
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/check.sh build-tree ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(package.find_package package.build_tree PROPERTIES LABELS unit TIMEOUT 300)
# Sinew pulled in by another project (add_subdirectory): the library alone, no top-level extras.
add_test(NAME package.subproject
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/check.sh subproject ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(package.subproject PROPERTIES LABELS package TIMEOUT 300)
if(TARGET sinew_cli AND NOT SINEW_SANITIZE)
  add_test(NAME package.deb
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/check.sh deb ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_LIST_DIR})
  set_tests_properties(package.deb PROPERTIES LABELS package TIMEOUT 300)
endif()
