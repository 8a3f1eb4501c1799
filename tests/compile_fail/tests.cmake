# What must not compile: SQL text that is not a string literal (kiln::db::Sql is
# consteval) reaches neither SQLite's exec() nor PostgreSQL's. Each case is compiled
# on its own by tests/compile_fail/check.py; a refusal counts only with the expected
# message, and the literal and trusted_sql() spellings must still build.
# Compile-only, so the sanitizer builds (make asan, make tsan) skip it.
if(NOT KILN_SANITIZER_TREE)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  add_test(NAME compile_fail
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check.py ${CMAKE_CXX_COMPILER}
                   ${PROJECT_SOURCE_DIR}/include ${CMAKE_CURRENT_LIST_DIR}/cases)
endif()
