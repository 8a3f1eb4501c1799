# Redis client (src/redis) against a real server: redis_server.py starts a private
# redis-server (Debian's, 127.0.0.1, a free port, append-only file in a temp dir),
# runs the GoogleTest binary with KILN_TEST_REDIS_URL, and stops it by PID. No
# server, no pass: the test fails with the reason.
if(TARGET kiln_redis)
  find_package(Python3 COMPONENTS Interpreter)
  set(_kiln_redis_py python3)
  if(Python3_Interpreter_FOUND)
    set(_kiln_redis_py ${Python3_EXECUTABLE})
  endif()
  foreach(_t redis_client_test)
    kiln_gtest_binary(${_t} ${CMAKE_CURRENT_LIST_DIR}/${_t}.cpp DEPS kiln_redis)
    target_include_directories(${_t} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
    add_test(NAME ${_t} COMMAND ${_kiln_redis_py} ${CMAKE_CURRENT_LIST_DIR}/redis_server.py run -- $<TARGET_FILE:${_t}>)
    set_tests_properties(${_t} PROPERTIES TIMEOUT 300 LABELS redis ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
  endforeach()
endif()

# The session store "redis", end to end: test_redis_sessions.py (two nodes sharing
# Redis, outage, forged cookies), and the shared-memory store's suite run again with
# KILN_SESSION_STORE=redis (every class but StoreFull, which sizes shared memory).
if(TARGET kiln_test_server)
  add_test(NAME redis_sessions
           COMMAND ${_kiln_redis_py} ${CMAKE_CURRENT_LIST_DIR}/redis_server.py run --
                   ${_kiln_redis_py} ${CMAKE_CURRENT_LIST_DIR}/test_redis_sessions.py --server $<TARGET_FILE:kiln_test_server>)
  add_test(NAME redis_sessions_suite
           COMMAND ${_kiln_redis_py} ${CMAKE_CURRENT_LIST_DIR}/redis_server.py run --
                   sh -c "KILN_SESSION_STORE=redis KILN_REDIS_URL=\$KILN_TEST_REDIS_URL exec \"$0\" \"$@\""
                   ${_kiln_redis_py} ${PROJECT_SOURCE_DIR}/tests/integration/test_sessions.py --server $<TARGET_FILE:kiln_test_server>
                   SharedAcrossWorkers SurvivesCrashAndReload Lifecycle LoggedOutStaysLoggedOut SecureCookie
                   SecureCookieBehindTrustedProxy SecureCookieAlways SignedCookies CsrfAndFlash)
  # Topics across nodes (topics.store = "redis"): two nodes' WebSocket rooms, a Redis restart.
  add_test(NAME redis_topics
           COMMAND ${_kiln_redis_py} ${CMAKE_CURRENT_LIST_DIR}/redis_server.py run --
                   ${_kiln_redis_py} ${CMAKE_CURRENT_LIST_DIR}/test_topics_redis.py --server $<TARGET_FILE:kiln_test_server>)
  set_tests_properties(redis_sessions redis_sessions_suite redis_topics PROPERTIES TIMEOUT 300 LABELS redis
                       ENVIRONMENT PYTHONDONTWRITEBYTECODE=1)
endif()
