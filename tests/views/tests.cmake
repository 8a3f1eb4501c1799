# Templates compiled by kilnc (included from tests/unit/tests.cmake):
#  - app/: templates built with kiln_add_views into kilnc_render_test, which renders
#    them (hostile input, every HTML context in app/contexts/, layouts, partials, loops,
#    raw output). -Werror: generated code must compile without a warning.
#  - bad/*.html: kilnc must reject each with exit status 1 and the message in the
#    file's first line, <%# expect: LINE:COL: error: MESSAGE %> ("%%>" for "%>").
#  - cxx_errors/*.html: kilnc accepts them, the C++ compiler rejects the generated
#    code, and its message must point at the template line in <%# expect: ... %>.
if(TARGET kilnc AND TARGET kiln)
  set(_views ${CMAKE_CURRENT_LIST_DIR})

  kiln_test(kilnc_render_test ${_views}/../unit/kilnc_render_test.cpp)
  kiln_add_views(kilnc_render_test ${_views}/app)
  target_include_directories(kilnc_render_test PRIVATE ${_views})  # "models/post.hpp"
  target_compile_options(kilnc_render_test PRIVATE -Werror)

  file(GLOB _bad CONFIGURE_DEPENDS ${_views}/bad/*.html)
  foreach(_t ${_bad})
    get_filename_component(_n ${_t} NAME_WE)
    add_test(NAME kilnc_error_${_n}
             COMMAND ${CMAKE_COMMAND} -DKILNC=$<TARGET_FILE:kilnc> -DROOT=${_views}/bad -DTEMPLATE=${_t}
                     -DOUT=${CMAKE_CURRENT_BINARY_DIR}/kilnc_bad -P ${_views}/expect_kilnc_error.cmake)
  endforeach()

  # Command-line misuse: kilnc explains instead of crashing.
  add_test(NAME kilnc_error_usage COMMAND kilnc --root ${_views}/app)
  set_tests_properties(kilnc_error_usage PROPERTIES PASS_REGULAR_EXPRESSION "usage: kilnc --root")
  add_test(NAME kilnc_error_outside_root
           COMMAND kilnc --root ${_views}/app --out ${CMAKE_CURRENT_BINARY_DIR}/kilnc_bad ${_views}/bad/unclosed.html)
  set_tests_properties(kilnc_error_outside_root PROPERTIES PASS_REGULAR_EXPRESSION "error: template is not under --root")
  add_test(NAME kilnc_error_unreadable
           COMMAND kilnc --root ${_views}/app --out ${CMAKE_CURRENT_BINARY_DIR}/kilnc_bad ${_views}/app/no-such.html)
  set_tests_properties(kilnc_error_unreadable PROPERTIES PASS_REGULAR_EXPRESSION "no-such.html: error: cannot read")

  file(GLOB _cxx CONFIGURE_DEPENDS ${_views}/cxx_errors/*.html)
  foreach(_t ${_cxx})
    get_filename_component(_n ${_t} NAME_WE)
    add_test(NAME kilnc_cxx_error_${_n}
             COMMAND ${CMAKE_COMMAND} -DKILNC=$<TARGET_FILE:kilnc> -DROOT=${_views}/cxx_errors -DTEMPLATE=${_t}
                     -DOUT=${CMAKE_CURRENT_BINARY_DIR}/kilnc_cxx_errors -DCXX=${CMAKE_CXX_COMPILER}
                     "-DINCLUDES=${PROJECT_SOURCE_DIR}/include;${_views}"
                     -P ${_views}/expect_cxx_error.cmake)
  endforeach()
endif()
