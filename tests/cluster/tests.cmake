# Two blog nodes behind HAProxy on one PostgreSQL and one Redis, through faults (a
# node SIGKILLed and restarted, Redis and PostgreSQL restarted): test_cluster.py's
# docstring. The server scripts start PostgreSQL and Redis; the test starts HAProxy
# and the nodes. Each part is Debian's own; a missing one fails the test.
if(TARGET blog AND TARGET kiln_redis)
  find_package(Python3 COMPONENTS Interpreter)
  set(_kiln_cluster_py python3)
  if(Python3_Interpreter_FOUND)
    set(_kiln_cluster_py ${Python3_EXECUTABLE})
  endif()
  add_test(NAME cluster
           COMMAND ${_kiln_cluster_py} ${PROJECT_SOURCE_DIR}/tests/pg/pg_server.py run --
                   ${_kiln_cluster_py} ${PROJECT_SOURCE_DIR}/tests/redis/redis_server.py run --
                   ${_kiln_cluster_py} ${CMAKE_CURRENT_LIST_DIR}/test_cluster.py --blog $<TARGET_FILE:blog>)
  set_tests_properties(cluster PROPERTIES TIMEOUT 300 LABELS cluster ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
endif()
