# Every public header compiles on its own (STYLE.md, build hygiene): one generated
# translation unit per header, built as part of the test build.
# Compile-only, so the sanitizer builds (make asan, make tsan) skip it.
if(NOT KILN_SANITIZER_TREE)
  file(GLOB KILN_PUBLIC_HEADERS RELATIVE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/include/kiln/*.hpp)
  set(_tus)
  foreach(h ${KILN_PUBLIC_HEADERS})
    string(REPLACE "/" "_" stem ${h})
    set(tu ${CMAKE_CURRENT_BINARY_DIR}/self_contained/${stem}.cpp)
    file(WRITE ${tu}.in "#include <${h}>\n")
    configure_file(${tu}.in ${tu} COPYONLY)
    list(APPEND _tus ${tu})
  endforeach()
  add_library(public_headers_self_contained OBJECT ${_tus})
  target_include_directories(public_headers_self_contained PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(public_headers_self_contained PRIVATE -O0 -g0)
endif()
