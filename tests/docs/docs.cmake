# The guide's examples (docs/*.md) are compiled, so they cannot rot: tests/docs/extract.py
# turns each ```cpp block into a translation unit and each named ```html template into
# a view, at configure time (an edited page re-runs it). Every block must build with
# -Werror; a page that stops compiling fails the build.
# Compile-only, so the sanitizer builds (make asan, make tsan) skip them.
if(TARGET kiln AND TARGET kilnc AND NOT KILN_SANITIZER_TREE)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  set(_docs ${PROJECT_SOURCE_DIR}/docs)
  set(_out ${CMAKE_CURRENT_BINARY_DIR}/docs_examples)
  file(GLOB _pages CONFIGURE_DEPENDS ${_docs}/*.md)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_pages} ${CMAKE_CURRENT_LIST_DIR}/extract.py)
  execute_process(COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/extract.py ${_docs} ${_out}
                  RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "tests/docs/extract.py could not read the guide's examples")
  endif()
  file(GLOB _examples ${_out}/cpp/*.cpp)
  # One static library: each block compiles on its own (main renamed, as a library
  # has none); nothing is linked or run: building it is the test.
  add_library(docs_examples STATIC ${_examples})
  target_compile_definitions(docs_examples PRIVATE main=docs_example_main)
  # Never run, so never optimized (-O0 -g0).
  target_compile_options(docs_examples PRIVATE -Werror -O0 -g0)
  target_link_libraries(docs_examples PRIVATE kiln GTest::gtest)
  if(EXISTS ${_out}/views)
    kiln_add_views(docs_examples ${_out}/views)
  endif()
endif()

# docs/configuration.md's table is generated from the settings table: it must match.
if(TARGET hello)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  add_test(NAME docs_configuration_reference
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_reference.py $<TARGET_FILE:hello>
                   ${PROJECT_SOURCE_DIR}/docs/configuration.md)
endif()

# SECURITY.md names the tests that prove each of its lines: they must exist.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME docs_security_tests
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/check_security.py ${PROJECT_SOURCE_DIR})
