# End-to-end tests: Python scripts (stdlib only) that start kiln_test_server and the
# hello example on a free 127.0.0.1 port and speak raw HTTP/1.1 over real sockets.
if(TARGET kiln)
  add_executable(kiln_test_server integration/test_server.cpp)
  target_link_libraries(kiln_test_server PRIVATE kiln)
  set_target_properties(kiln_test_server PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

  find_package(Python3 COMPONENTS Interpreter)
  set(_kiln_py python3)
  if(Python3_Interpreter_FOUND)
    set(_kiln_py ${Python3_EXECUTABLE})
  endif()

  set(_kiln_it_args --server $<TARGET_FILE:kiln_test_server>)
  if(TARGET hello)
    list(APPEND _kiln_it_args --hello $<TARGET_FILE:hello>)
  endif()
  if(TARGET kiln_cli)
    list(APPEND _kiln_it_args --kiln $<TARGET_FILE:kiln_cli>)
  endif()
  if(TARGET generic)
    list(APPEND _kiln_it_args --generic $<TARGET_FILE:generic>)
  endif()

  foreach(_name keepalive pipelining bodies bad_requests byte_by_byte routing timeouts hello supervisor static_files
                config access_log metrics hybrid listen sessions uploads bench coroutines proxies tls http2 compression
                sse websocket)
    add_test(NAME integration_${_name}
             COMMAND ${_kiln_py} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_${_name}.py ${_kiln_it_args})
    # Each script bounds its own waits; this is the backstop.
    set_tests_properties(integration_${_name} PROPERTIES TIMEOUT 180 LABELS integration
                         ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
  endforeach()
  # Runs a load client at full speed for seconds: alone, so it cannot starve the
  # timing checks of the tests that would run beside it on a 2-core machine.
  if(TEST integration_bench)
    set_tests_properties(integration_bench PROPERTIES RUN_SERIAL TRUE)
  endif()
endif()
# h2spec (HTTP/2 conformance) on h2c and h2: builds the suite once (scripts/h2spec.sh).
if(TARGET kiln_test_server)
  add_test(NAME integration_h2spec
           COMMAND ${_kiln_py} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_h2spec.py ${_kiln_it_args})
  set_tests_properties(integration_h2spec PROPERTIES TIMEOUT 900 LABELS integration ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
endif()
# Autobahn|Testsuite (WebSocket conformance, 517 cases) via kosoku (scripts/kosoku.sh).
if(TARGET kiln_test_server)
  add_test(NAME integration_autobahn
           COMMAND ${_kiln_py} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_autobahn.py ${_kiln_it_args})
  # About three and a half minutes of a core and a third (kosoku's client and the
  # server's zlib, in the permessage-deflate cases): COST has ctest start it first, so
  # the rest of the suite runs beside it rather than after it. Under a sanitizer the
  # largest deflate cases are left out (see the test's KILN_AUTOBAHN).
  set(_kiln_autobahn all)
  if(KILN_SANITIZER_TREE)
    set(_kiln_autobahn sanitizer)
  endif()
  set_tests_properties(integration_autobahn PROPERTIES TIMEOUT 1200 LABELS integration COST 1000
                       ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1;KILN_AUTOBAHN=${_kiln_autobahn}")
endif()
# The blog example over HTTP (its own binary argument, --blog).
if(TARGET blog)
  add_test(NAME integration_blog
           COMMAND ${_kiln_py} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_blog.py --blog $<TARGET_FILE:blog>)
  set_tests_properties(integration_blog PROPERTIES TIMEOUT 180 LABELS integration ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
endif()

# kiln new/generate/routes/run --watch: builds one generated project (see the test's
# docstring), so it gets more time than the others.
if(TARGET kiln_cli AND TARGET kiln)
  add_test(NAME integration_generators
           COMMAND ${_kiln_py} ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_generators.py --kiln $<TARGET_FILE:kiln_cli>)
  set_tests_properties(integration_generators PROPERTIES TIMEOUT 900 LABELS integration
                       ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
endif()
