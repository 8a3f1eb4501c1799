# The layer map, held by the linker: for each layer, a program with every object of
# that layer (whole-archive, so nothing is skipped for being unused) and only what
# the layer's own target links, i.e. the layers below it. A call from a layer into
# one above it is then an undefined reference, and the build fails.
# Link-only, so the sanitizer builds (make asan, make tsan) skip it.
if(TARGET kiln AND NOT KILN_SANITIZER_TREE)
  foreach(layer kiln_util kiln_net kiln_http kiln_view kiln_app kiln_db kiln_pg kiln_redis kiln_auth kiln_server)
    add_executable(layer_check_${layer} ${CMAKE_CURRENT_LIST_DIR}/check_main.cpp)
    target_link_libraries(layer_check_${layer} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${layer}>")
    set_target_properties(layer_check_${layer} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/layers)
  endforeach()
endif()
