# PostgreSQL driver (src/pg) against a real server: pg_server.py starts a private
# PostgreSQL (Debian's postgresql, initdb in a temp dir, 127.0.0.1, a free port), runs
# the GoogleTest binary with KILN_TEST_PG_URL, and stops it by PID. No server, no pass:
# the test fails with the reason.
if(TARGET kiln_pg)
  find_package(Python3 COMPONENTS Interpreter)
  set(_kiln_pg_py python3)
  if(Python3_Interpreter_FOUND)
    set(_kiln_pg_py ${Python3_EXECUTABLE})
  endif()
  foreach(_t pg_client_test pg_migrate_test pg_transaction_test pg_listen_test pg_model_test)
    kiln_gtest_binary(${_t} ${CMAKE_CURRENT_LIST_DIR}/${_t}.cpp DEPS kiln_pg)
    target_include_directories(${_t} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
    add_test(NAME ${_t} COMMAND ${_kiln_pg_py} ${CMAKE_CURRENT_LIST_DIR}/pg_server.py run -- $<TARGET_FILE:${_t}>)
    set_tests_properties(${_t} PROPERTIES TIMEOUT 300 LABELS pg ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
  endforeach()

  # SQLSTATE → db::Error mapping, no server needed (src/pg/errors.hpp names libpq's types).
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(KILN_TEST_LIBPQ REQUIRED IMPORTED_TARGET libpq)
  kiln_test(pg_errors_test ${CMAKE_CURRENT_LIST_DIR}/pg_errors_test.cpp DEPS kiln_pg)
  target_include_directories(pg_errors_test PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(pg_errors_test PRIVATE PkgConfig::KILN_TEST_LIBPQ)
endif()

# examples/techempower by the suite's rules (test_techempower.py's docstring);
# pg_stat_statements counts the queries each test sends.
if(TARGET techempower)
  add_test(NAME pg_techempower
           COMMAND ${_kiln_pg_py} ${CMAKE_CURRENT_LIST_DIR}/pg_server.py run --
                   ${_kiln_pg_py} ${CMAKE_CURRENT_LIST_DIR}/test_techempower.py --techempower $<TARGET_FILE:techempower>)
  set_tests_properties(pg_techempower PROPERTIES TIMEOUT 300 LABELS pg
                       ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1;KILN_PG_SETTINGS=shared_preload_libraries=pg_stat_statements")
endif()

# The blog on PostgreSQL: the same end-to-end tests as on SQLite (tests/integration/
# test_blog.py's Crud, Pagination, Workers, the accounts and their throttles), the
# server given --database-url.
if(TARGET blog)
  add_test(NAME pg_blog
           COMMAND ${_kiln_pg_py} ${CMAKE_CURRENT_LIST_DIR}/pg_server.py run --
                   ${_kiln_pg_py} ${PROJECT_SOURCE_DIR}/tests/integration/test_blog.py --blog $<TARGET_FILE:blog>
                   Crud Pagination Workers Accounts AddressThrottle AccountThrottle SignUpThrottle OnPostgres)
  set_tests_properties(pg_blog PROPERTIES TIMEOUT 300 LABELS pg
                       ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1;KILN_BLOG_POSTGRES=1")
endif()
