# kiln_test(NAME SOURCES... [DEPS libs...]): one GoogleTest binary, registered with
# ctest. DEPS defaults to kiln_internal (all of kiln plus private headers).
find_package(GTest)
function(kiln_test name)
  cmake_parse_arguments(T "" "" "DEPS" ${ARGN})
  if(NOT T_DEPS)
    set(T_DEPS kiln_internal)
  endif()
  add_executable(${name} ${T_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest_main)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  add_test(NAME ${name} COMMAND ${name})
endfunction()
