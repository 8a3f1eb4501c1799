# The template compiler as a library (lexer, parser, codegen), shared by the kilnc
# executable, its unit tests and the fuzz build (tests/fuzz/CMakeLists.txt).
set(KILNC_LIB_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/names.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lexer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/directives.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layout_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/js_state.cpp
  ${CMAKE_CURRENT_LIST_DIR}/html_state.cpp
  ${CMAKE_CURRENT_LIST_DIR}/code_flow.cpp
  ${CMAKE_CURRENT_LIST_DIR}/escape_contexts.cpp
  ${CMAKE_CURRENT_LIST_DIR}/parser.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpp_writer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/codegen.cpp
  ${CMAKE_CURRENT_LIST_DIR}/line_check.cpp
)
set(KILNC_INCLUDE_DIR ${CMAKE_CURRENT_LIST_DIR}/..)  # so sources say "kilnc/lexer.hpp"
