# kiln_gtest_binary(NAME SOURCES... DEPS libs...): one GoogleTest binary in tests/.
# kiln_test(NAME SOURCES... [DEPS libs...]): the same, registered with ctest as it is.
# DEPS defaults to kiln_internal (all of kiln plus private headers).
find_package(GTest)
function(kiln_gtest_binary name)
  cmake_parse_arguments(T "" "" "DEPS" ${ARGN})
  add_executable(${name} ${T_UNPARSED_ARGUMENTS})
  # The test's own sources at -O0: GoogleTest's macros make them the slowest files of
  # the build to optimize (1.9 to 2.9 times their -O0 time at -O2 -g, 1.6 to 1.9 at
  # ASan's -O1, in the files measured), and their speed is not what any test measures. kiln's libraries they link, and views a test adds
  # (kiln_add_views), keep the tree's flags.
  set_property(SOURCE ${T_UNPARSED_ARGUMENTS} APPEND PROPERTY COMPILE_OPTIONS -O0)
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
endfunction()

function(kiln_test name)
  cmake_parse_arguments(T "" "" "DEPS" ${ARGN})
  if(NOT T_DEPS)
    set(T_DEPS kiln_internal)
  endif()
  kiln_gtest_binary(${name} ${T_UNPARSED_ARGUMENTS} DEPS ${T_DEPS})
  add_test(NAME ${name} COMMAND ${name})
endfunction()
