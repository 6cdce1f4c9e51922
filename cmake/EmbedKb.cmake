# Embeds the knowledge-base schema into the library as one generated source, so the .sql files are
# the only copy: kb/schema.sql (a fresh file) and every kb/migrations/NNN_<name>.sql after 001 (an
# older file is brought up to date), in the order of their numbers. Adding a migration is adding a
# .sql file (the glob re-runs at build time); cmake/EmbedKbSql.cmake writes the source and checks
# what the files promise (see its banner). Defines sinew::detail::kb::kSchema and migrations()
# (lib/kb/schema.hpp).
function(sinew_embed_kb out_var)
  set(kb_dir ${PROJECT_SOURCE_DIR}/kb)
  set(gen_dir ${CMAKE_CURRENT_BINARY_DIR}/embedded_kb)
  file(GLOB files CONFIGURE_DEPENDS ${kb_dir}/migrations/*.sql)

  # Numbers 1, 2, 3, ... each once: a gap or a double would skip or repeat a schema version.
  set(numbered)
  foreach(file IN LISTS files)
    get_filename_component(name ${file} NAME)
    if(NOT name MATCHES "^([0-9][0-9][0-9])_[A-Za-z0-9_]+\\.sql$")
      message(FATAL_ERROR "kb/migrations/${name}: a migration is named NNN_<name>.sql "
                          "(three digits: the schema version it migrates to; then letters, digits, _)")
    endif()
    list(APPEND numbered "${CMAKE_MATCH_1}|${file}")
  endforeach()
  list(SORT numbered)
  set(migrations)
  set(expected 1)
  foreach(item IN LISTS numbered)
    string(REPLACE "|" ";" parts "${item}")
    list(GET parts 0 digits)
    list(GET parts 1 file)
    math(EXPR number "${digits}")
    if(NOT number EQUAL expected)
      message(FATAL_ERROR "kb/migrations/: expected a migration numbered ${expected}, found ${file}")
    endif()
    math(EXPR expected "${expected} + 1")
    list(APPEND migrations ${file})
  endforeach()
  if(NOT migrations)
    message(FATAL_ERROR "kb/migrations/ holds no NNN_<name>.sql file (001_initial.sql at least)")
  endif()

  # The file list as the build-time script reads it, rewritten only when it changes: adding or
  # removing a migration regenerates the source even when no file's time is newer.
  set(list_file ${gen_dir}/kb_sql_files.cmake)
  file(WRITE ${list_file}.in "set(SCHEMA [==[${kb_dir}/schema.sql]==])\nset(MIGRATIONS [==[${migrations}]==])\n")
  configure_file(${list_file}.in ${list_file} COPYONLY)

  set(out ${gen_dir}/kb_sql.cpp)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DLIST=${list_file} -DOUT=${out} -P ${PROJECT_SOURCE_DIR}/cmake/EmbedKbSql.cmake
    DEPENDS ${list_file} ${kb_dir}/schema.sql ${migrations} ${PROJECT_SOURCE_DIR}/cmake/EmbedKbSql.cmake
    COMMENT "Embedding the knowledge-base schema and migrations (kb/)" VERBATIM)
  set(${out_var} ${out} PARENT_SCOPE)
endfunction()
