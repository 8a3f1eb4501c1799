# Checks of kiln's own sources that no compiler makes.
find_package(Python3 COMPONENTS Interpreter REQUIRED)
# No co_await in an if/while/switch condition: GCC 12 miscompiles some (see the script).
add_test(NAME lint_co_await_conditions
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/co_await_conditions.py ${PROJECT_SOURCE_DIR}
                 src include examples tools docs bench tests)
add_test(NAME lint_co_await_conditions_self_test
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/co_await_conditions.py --self-test)
