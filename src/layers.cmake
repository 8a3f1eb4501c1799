# The layers above kiln_proto (included from src/CMakeLists.txt), one static library
# each, linked only to the layers below it (DESIGN.md's map):
#
#   kiln_util  <- kiln_net  <- kiln_http (+ kiln_proto)  <- kiln_app  <- kiln_server
#   kiln_view  <- kiln_app;  kiln_util <- kiln_db;  kiln_net + kiln_db <- kiln_pg
#   kiln_net <- kiln_redis;  kiln_pg + kiln_redis <- kiln_server (their settings, the session store "redis")
#   kiln_app + kiln_db + kiln_pg <- kiln_auth
#   kiln = kiln_server + kiln_db + kiln_pg + kiln_redis + kiln_auth
#
# A call that goes up does not link: tests/layers builds, for every layer, a program
# that pulls in every object of that layer (whole-archive) with only the layers below
# it, so an upward reference is an undefined symbol in the build, not a comment.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus)
pkg_check_modules(NGHTTP2 REQUIRED IMPORTED_TARGET libnghttp2)
pkg_check_modules(COMPRESSION REQUIRED IMPORTED_TARGET zlib libbrotlienc libzstd)
find_package(OpenSSL REQUIRED)
find_package(nlohmann_json REQUIRED)  # Request::json() returns its DOM
find_package(SQLite3 REQUIRED)

function(kiln_layer name)
  add_library(${name} STATIC ${ARGN})
  target_include_directories(${name} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                             PRIVATE ${PROJECT_SOURCE_DIR}/src)
endfunction()

kiln_layer(kiln_util
  util/log.cpp
  util/random.cpp
  util/siphash.cpp
  util/utf8.cpp
)
target_link_libraries(kiln_util PUBLIC Threads::Threads)

kiln_layer(kiln_net
  net/buffer.cpp
  net/timer.cpp
  net/deadline_heap.cpp
  net/async.cpp
  net/sleep.cpp
  net/frames.cpp
  net/loop.cpp
  net/listener.cpp
  net/output.cpp
  net/peer.cpp
  net/file_root.cpp
  net/file_io.cpp
  net/thread_pool.cpp
  net/mailbox.cpp
  net/pending.cpp
  net/reconnect.cpp
  net/tls.cpp
  net/process_bus.cpp
  net/reuseport_steer.cpp
)
target_link_libraries(kiln_net PUBLIC kiln_util PRIVATE OpenSSL::SSL)

kiln_layer(kiln_http
  http/address_counts.cpp
  http/rate_table.cpp
  http/proxy_protocol.cpp
  http/forwarded.cpp
  http/status.cpp
  http/serializer.cpp
  http/connection.cpp
  http/h2_session.cpp
  http/ws_session.cpp
  http/ws_deflate.cpp
  http/compress.cpp
  http/server.cpp
  http/exchange.cpp
  http/request.cpp
  http/response.cpp
)
target_link_libraries(kiln_http PUBLIC kiln_net kiln_proto PRIVATE PkgConfig::NGHTTP2 PkgConfig::COMPRESSION)

kiln_layer(kiln_view
  view/escape.cpp
  view/tags.cpp
  view/url.cpp
  view/dates.cpp
)

kiln_layer(kiln_app
  app/request.cpp
  app/response.cpp
  app/compression.cpp
  app/event_stream.cpp
  app/websocket.cpp
  app/ws_topics.cpp
  app/router.cpp
  app/app.cpp
  app/session.cpp
  app/session_table.cpp
  app/signing.cpp
  app/cookie_access.cpp
  app/form.cpp
  app/form_reader.cpp
  app/form_values.cpp
  app/json_writer.cpp
  app/blocking.cpp
  app/body.cpp
  app/upload_sink.cpp
  app/dispatcher.cpp
  app/testing.cpp
  app/csrf.cpp
  app/security_headers.cpp
  app/mime.cpp
  app/file_http.cpp
  app/file_cache.cpp
  app/files.cpp
  app/static_path.cpp
)
target_link_libraries(kiln_app PUBLIC kiln_http kiln_view nlohmann_json::nlohmann_json PRIVATE OpenSSL::Crypto)

# The SQLite data layer; sqlite3.h stays out of the public headers.
kiln_layer(kiln_db
  db/error.cpp
  db/statement.cpp
  db/database.cpp
  db/row.cpp
  db/transaction.cpp
  db/per_thread.cpp
  db/migration_files.cpp
  db/migrate.cpp
  db/model.cpp
)
target_link_libraries(kiln_db PUBLIC kiln_util PRIVATE SQLite::SQLite3)

# PostgreSQL on the event loop (libpq pipeline mode); libpq-fe.h stays out of the public header.
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)
kiln_layer(kiln_pg
  pg/values.cpp
  pg/errors.cpp
  pg/op.cpp
  pg/connection.cpp
  pg/pool.cpp
  pg/refused.cpp
  pg/url.cpp
  pg/client.cpp
  pg/per_loop.cpp
  pg/migrate.cpp
  pg/transaction.cpp
  pg/hub.cpp
  pg/listener.cpp
  pg/model.cpp
)
target_link_libraries(kiln_pg PUBLIC kiln_net kiln_db PRIVATE PkgConfig::LIBPQ)

# Redis on the event loop (hiredis's async context); hiredis's headers stay out of the public one.
pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)
kiln_layer(kiln_redis
  redis/client.cpp
  redis/url.cpp
  redis/connection.cpp
  redis/pool.cpp
  redis/refused.cpp
  redis/hub.cpp
  redis/subscription.cpp
  redis/per_loop.cpp
  redis/cache.cpp
  redis/session_store.cpp
)
target_link_libraries(kiln_redis PUBLIC kiln_net PRIVATE PkgConfig::HIREDIS)

# Accounts (kiln::auth): the app's users on its Store, Argon2id from libsodium.
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)  # passwords' Unicode normalization
kiln_layer(kiln_auth
  auth/password.cpp
  auth/password_form.cpp
  auth/failure_counts.cpp
  auth/accounts.cpp
  auth/timing_pad.cpp
)
target_link_libraries(kiln_auth PUBLIC kiln_app kiln_db kiln_pg PRIVATE PkgConfig::SODIUM PkgConfig::UTF8PROC)

kiln_layer(kiln_server
  server/flags.cpp
  server/run.cpp
  server/serve.cpp
  server/listeners.cpp
  server/process_logs.cpp
  server/supervisor.cpp
  server/config.cpp
  server/settings_doc.cpp
  server/access_log.cpp
  server/log_escape.cpp
  server/log_file.cpp
  server/secret_handoff.cpp
  server/stats.cpp
  server/privileges.cpp
  server/fd_limit.cpp
  server/session_segment.cpp
  server/rate_segment.cpp
  server/health.cpp
  server/sd_notify.cpp
  server/tls_setup.cpp
  server/ticket_segment.cpp
  server/topics_redis.cpp
)
target_link_libraries(kiln_server PUBLIC kiln_app kiln_pg kiln_redis PRIVATE PkgConfig::TOMLPP OpenSSL::Crypto)

# What applications link.
add_library(kiln INTERFACE)
target_link_libraries(kiln INTERFACE kiln_server kiln_db kiln_pg kiln_redis kiln_auth)
add_library(kiln::kiln ALIAS kiln)

# A sanitized static library needs the sanitizer runtime wherever it is linked, also
# in projects built against the installed package (kiln new in `make asan`).
if(KILN_SANITIZE)
  target_link_options(kiln_proto INTERFACE -fsanitize=address,undefined)
endif()

add_library(kiln_internal INTERFACE)
target_link_libraries(kiln_internal INTERFACE kiln)
target_include_directories(kiln_internal INTERFACE ${PROJECT_SOURCE_DIR}/src)

# Installed package: find_package(kiln) then target_link_libraries(app kiln::kiln).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
target_include_directories(kiln_proto INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set(KILN_LAYERS kiln_util kiln_net kiln_proto kiln_http kiln_view kiln_app kiln_db kiln_pg kiln_redis kiln_auth kiln_server)
foreach(l ${KILN_LAYERS})
  target_include_directories(${l} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
install(TARGETS kiln ${KILN_LAYERS} EXPORT kilnTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kiln DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT kilnTargets NAMESPACE kiln:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
file(WRITE ${CMAKE_BINARY_DIR}/kilnConfig.cmake
     "include(CMakeFindDependencyMacro)\nfind_dependency(Threads)\nfind_dependency(PkgConfig)\npkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus)\npkg_check_modules(NGHTTP2 REQUIRED IMPORTED_TARGET libnghttp2)\npkg_check_modules(COMPRESSION REQUIRED IMPORTED_TARGET zlib libbrotlienc libzstd)\npkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)\npkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)\npkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)\npkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)\nfind_dependency(SQLite3)\nfind_dependency(OpenSSL)\nfind_dependency(nlohmann_json)\ninclude(\${CMAKE_CURRENT_LIST_DIR}/kilnTargets.cmake)\n")
write_basic_package_version_file(${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/kilnConfig.cmake ${CMAKE_BINARY_DIR}/kilnConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)

# Templates: kiln_add_views() for users of the installed package (kilnc itself joins
# the kilnTargets export set in tools/kilnc/CMakeLists.txt).
install(FILES ${PROJECT_SOURCE_DIR}/cmake/KilnViews.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kiln)
file(APPEND ${CMAKE_BINARY_DIR}/kilnConfig.cmake "include(\${CMAKE_CURRENT_LIST_DIR}/KilnViews.cmake)\n")
