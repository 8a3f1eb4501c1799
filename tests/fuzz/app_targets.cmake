# libFuzzer targets for what the app and server layers read from outside: route
# patterns and paths, session records, access-log fields, static-file paths and the
# configuration. The kiln library is not part of the fuzz configuration, so each target
# builds, instrumented like kiln_proto, only the few sources it exercises (and links
# what those need). Included from tests/fuzz/CMakeLists.txt; binaries go to <build>/fuzz/.
set(KILN_SRC ${PROJECT_SOURCE_DIR}/src)

# kiln_fuzz_target(NAME SOURCES...): NAME.cpp, fuzzing the kiln SOURCES built beside it.
function(kiln_fuzz_executable name sources)
  add_executable(${name} ${name}.cpp)
  target_link_libraries(${name} PRIVATE ${sources})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined
                         -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
endfunction()

function(kiln_fuzz_target name)
  add_library(${name}_sources STATIC ${ARGN})
  target_include_directories(${name}_sources PUBLIC ${PROJECT_SOURCE_DIR}/include ${KILN_SRC})
  target_compile_options(${name}_sources PRIVATE ${KILN_FUZZ_FLAGS})
  target_link_libraries(${name}_sources PUBLIC kiln_proto)
  kiln_fuzz_executable(${name} ${name}_sources)
endfunction()

kiln_fuzz_target(fuzz_router ${KILN_SRC}/app/router.cpp)
# session.cpp also starts sessions (a random id from util/random; the cookie setters
# it calls are stubbed in the fuzzer, as Response's cookie code needs the app layer).
kiln_fuzz_target(fuzz_session_record ${KILN_SRC}/app/session.cpp ${KILN_SRC}/util/random.cpp)
kiln_fuzz_target(fuzz_log_escape ${KILN_SRC}/server/log_escape.cpp ${KILN_SRC}/util/utf8.cpp)
find_package(nlohmann_json REQUIRED)  # the fuzzer's second opinion on the JSON form
target_link_libraries(fuzz_log_escape PRIVATE nlohmann_json::nlohmann_json)
kiln_fuzz_target(fuzz_static_path ${KILN_SRC}/app/static_path.cpp ${KILN_SRC}/net/file_root.cpp)
kiln_fuzz_target(fuzz_form_values ${KILN_SRC}/app/form_values.cpp ${KILN_SRC}/util/utf8.cpp)
# config.cpp checks addresses (net/peer), log levels (util/log), the database and Redis
# URLs (pg/url with libpq, redis/url) and reads the secret's environment variables
# (server/secret_handoff); toml++ parses.
kiln_fuzz_target(fuzz_config ${KILN_SRC}/server/config.cpp ${KILN_SRC}/net/peer.cpp ${KILN_SRC}/util/log.cpp
                 ${KILN_SRC}/server/secret_handoff.cpp ${KILN_SRC}/pg/url.cpp ${KILN_SRC}/pg/errors.cpp
                 ${KILN_SRC}/db/error.cpp ${KILN_SRC}/redis/url.cpp)
find_package(PkgConfig REQUIRED)
pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus)
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)
find_package(SQLite3 REQUIRED)  # db/error.cpp names SQLite's errors
target_link_libraries(fuzz_config_sources PUBLIC PkgConfig::TOMLPP PkgConfig::LIBPQ SQLite::SQLite3)
# PostgreSQL's text values read by kiln (src/pg/values.cpp), in results built with
# libpq's own constructors; db::Error comes from src/db/error.cpp (SQLite's names).
kiln_fuzz_target(fuzz_pg_values ${KILN_SRC}/pg/values.cpp ${KILN_SRC}/db/error.cpp)
target_link_libraries(fuzz_pg_values_sources PUBLIC PkgConfig::LIBPQ SQLite::SQLite3)
# kiln::JsonWriter (src/app/json_writer.cpp, util/utf8.cpp), checked against nlohmann.
kiln_fuzz_target(fuzz_json_writer ${KILN_SRC}/app/json_writer.cpp ${KILN_SRC}/util/utf8.cpp)
target_link_libraries(fuzz_json_writer PRIVATE nlohmann_json::nlohmann_json)
# The PROXY protocol header (http/proxy_protocol.cpp) and the client behind trusted
# proxies (http/forwarded.cpp; iequals from kiln_proto); net/peer formats and matches
# the addresses.
kiln_fuzz_target(fuzz_proxy_protocol ${KILN_SRC}/http/proxy_protocol.cpp ${KILN_SRC}/net/peer.cpp)
kiln_fuzz_target(fuzz_forwarded ${KILN_SRC}/http/forwarded.cpp ${KILN_SRC}/net/peer.cpp)
# HTTP/2 (http/h2_session.cpp and the connection's HTTP/2 mode) on a real loop, server
# and socket pair: the engine's http/ and net/ sources, nghttp2, zlib and OpenSSL (net/tls).
set(KILN_ENGINE_SOURCES
    ${KILN_SRC}/http/connection.cpp ${KILN_SRC}/http/h2_session.cpp ${KILN_SRC}/http/ws_session.cpp
    ${KILN_SRC}/http/ws_deflate.cpp ${KILN_SRC}/http/server.cpp ${KILN_SRC}/http/exchange.cpp
    ${KILN_SRC}/http/request.cpp ${KILN_SRC}/http/response.cpp ${KILN_SRC}/http/serializer.cpp
    ${KILN_SRC}/http/status.cpp ${KILN_SRC}/http/address_counts.cpp ${KILN_SRC}/http/rate_table.cpp
    ${KILN_SRC}/http/proxy_protocol.cpp ${KILN_SRC}/http/forwarded.cpp ${KILN_SRC}/net/buffer.cpp
    ${KILN_SRC}/net/timer.cpp ${KILN_SRC}/net/deadline_heap.cpp ${KILN_SRC}/net/loop.cpp ${KILN_SRC}/net/output.cpp
    ${KILN_SRC}/net/peer.cpp ${KILN_SRC}/net/tls.cpp ${KILN_SRC}/net/mailbox.cpp ${KILN_SRC}/util/log.cpp
    ${KILN_SRC}/util/random.cpp ${KILN_SRC}/util/siphash.cpp)
pkg_check_modules(NGHTTP2 REQUIRED IMPORTED_TARGET libnghttp2)
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib)
find_package(OpenSSL REQUIRED)
find_package(Threads REQUIRED)
kiln_fuzz_target(fuzz_h2 ${KILN_ENGINE_SOURCES})
target_link_libraries(fuzz_h2_sources PUBLIC PkgConfig::NGHTTP2 PkgConfig::ZLIB OpenSSL::SSL Threads::Threads)
# WebSocket (http/ws_session.cpp, permessage-deflate, the connection's WebSocket mode)
# after an upgrade, on the same engine library.
kiln_fuzz_executable(fuzz_ws fuzz_h2_sources)
# permessage-deflate's offer parser and its inflation limits (http/ws_deflate.cpp, zlib).
kiln_fuzz_target(fuzz_ws_deflate ${KILN_SRC}/http/ws_deflate.cpp)
target_link_libraries(fuzz_ws_deflate_sources PUBLIC PkgConfig::ZLIB)
