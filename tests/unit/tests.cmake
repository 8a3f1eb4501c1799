# Unit tests, one GoogleTest binary each (helper: cmake/KilnTest.cmake).

# --- HTTP/1.1 protocol layer: request-head parser, chunked decoder, URL helpers ---
kiln_test(parser_test unit/parser_test.cpp DEPS kiln_proto_internal)
kiln_test(chunked_test unit/chunked_test.cpp DEPS kiln_proto_internal)
kiln_test(url_test unit/url_test.cpp DEPS kiln_proto_internal)
# Differential test against Debian's libhttp-parser (package libhttp-parser-dev).
find_library(HTTP_PARSER_LIBRARY http_parser)
find_path(HTTP_PARSER_INCLUDE_DIR http_parser.h)
if(HTTP_PARSER_LIBRARY AND HTTP_PARSER_INCLUDE_DIR)
  kiln_test(parser_differential_test unit/parser_differential_test.cpp
            DEPS kiln_proto_internal ${HTTP_PARSER_LIBRARY})
  target_include_directories(parser_differential_test PRIVATE ${HTTP_PARSER_INCLUDE_DIR})
else()
  message(FATAL_ERROR "libhttp-parser-dev not found (run scripts/deps.sh): the differential parser test needs it")
endif()
kiln_test(multipart_test unit/multipart_test.cpp DEPS kiln_proto_internal)
kiln_test(form_test unit/form_test.cpp DEPS kiln_proto_internal)
kiln_test(cookie_test unit/cookie_test.cpp DEPS kiln_proto_internal)
kiln_test(ws_frame_test unit/ws_frame_test.cpp DEPS kiln_proto_internal)
# --- end of protocol-layer tests; other tests are appended below ---

# --- engine and app (need the whole library) ---
if(TARGET kiln)
  kiln_test(router_test unit/router_test.cpp)
  kiln_test(date_test unit/date_test.cpp)
  kiln_test(serializer_test unit/serializer_test.cpp)
  kiln_test(file_io_test unit/file_io_test.cpp)
  kiln_test(session_test unit/session_test.cpp)
  kiln_test(session_failure_test unit/session_failure_test.cpp)
  kiln_test(address_range_test unit/address_range_test.cpp)
  kiln_test(signing_test unit/signing_test.cpp)
  kiln_test(connection_test unit/connection_test.cpp)
  kiln_test(loop_test unit/loop_test.cpp)
  kiln_test(testing_client_test unit/testing_client_test.cpp)
  kiln_test(middleware_chain_test unit/middleware_chain_test.cpp)
  kiln_test(form_reader_test unit/form_reader_test.cpp)
  kiln_test(upload_sink_test unit/upload_sink_test.cpp)
  kiln_test(coroutine_test unit/coroutine_test.cpp)
  kiln_test(security_headers_test unit/security_headers_test.cpp)
  kiln_test(json_writer_test unit/json_writer_test.cpp)
  kiln_test(blocking_test unit/blocking_test.cpp)
  kiln_test(store_test unit/store_test.cpp)
  kiln_test(rate_table_test unit/rate_table_test.cpp)
  kiln_test(login_redirect_test unit/login_redirect_test.cpp)
  kiln_test(failure_counts_test unit/failure_counts_test.cpp)
  kiln_test(password_hashing_test unit/password_hashing_test.cpp)
  kiln_test(timing_pad_test unit/timing_pad_test.cpp)
  target_include_directories(password_hashing_test PRIVATE ${PROJECT_SOURCE_DIR}/tests)  # support/async_test.hpp
  kiln_test(topics_test unit/topics_test.cpp)
  target_include_directories(topics_test PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  kiln_test(ws_topics_test unit/ws_topics_test.cpp)
  kiln_test(process_bus_test unit/process_bus_test.cpp)
  kiln_test(reuseport_steer_test unit/reuseport_steer_test.cpp)
  kiln_test(tls_stream_test unit/tls_stream_test.cpp)
  target_include_directories(ws_topics_test PRIVATE ${PROJECT_SOURCE_DIR}/tests)  # support/async_test.hpp
  target_include_directories(failure_counts_test PRIVATE ${PROJECT_SOURCE_DIR}/tests)  # support/async_test.hpp
  target_include_directories(loop_test PRIVATE ${PROJECT_SOURCE_DIR}/tests)  # support/async_test.hpp
  kiln_test(proxy_protocol_test unit/proxy_protocol_test.cpp)
  kiln_test(forwarded_test unit/forwarded_test.cpp)
endif()
# --- static files: mime, HTTP-date parsing, range/conditional rules, root confinement, cache ---
if(TARGET kiln)
  kiln_test(files_test unit/files_test.cpp)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(CODECS REQUIRED IMPORTED_TARGET zlib libbrotlidec libzstd)  # the decoders, for compress_test
  kiln_test(compress_test unit/compress_test.cpp DEPS kiln_internal PkgConfig::CODECS)
  kiln_test(ws_deflate_test unit/ws_deflate_test.cpp DEPS kiln_internal PkgConfig::CODECS)
endif()

# --- kiln bench, the load client (tools/kiln/bench): parser, options, session parts ---
if(TARGET kiln_bench)
  kiln_test(bench_response_parser_test unit/bench_response_parser_test.cpp DEPS kiln_bench)
  kiln_test(bench_options_test unit/bench_options_test.cpp DEPS kiln_bench)
  kiln_test(bench_session_parts_test unit/bench_session_parts_test.cpp DEPS kiln_bench)
endif()
# --- db: SQLite data layer (temp files; migration fixtures in tests/db/) ---
if(TARGET kiln)
  kiln_test(db_values_test unit/db_values_test.cpp)
  kiln_test(db_database_test unit/db_database_test.cpp)
  kiln_test(db_transaction_test unit/db_transaction_test.cpp)
  kiln_test(db_migrate_test unit/db_migrate_test.cpp)
  target_compile_definitions(db_migrate_test PRIVATE KILN_DB_FIXTURES="${PROJECT_SOURCE_DIR}/tests/db")
  kiln_test(db_model_test unit/db_model_test.cpp)
endif()

# --- template compiler (tools/kilnc) and the view runtime (src/view) ---
if(TARGET kilnc_lib)
  kiln_test(kilnc_lexer_test unit/kilnc_lexer_test.cpp DEPS kilnc_lib)
  kiln_test(kilnc_parser_test unit/kilnc_parser_test.cpp DEPS kilnc_lib)
  kiln_test(kilnc_codegen_test unit/kilnc_codegen_test.cpp DEPS kilnc_lib)
  kiln_test(kilnc_contexts_test unit/kilnc_contexts_test.cpp DEPS kilnc_lib)
endif()
if(TARGET kiln)
  kiln_test(kilnc_helpers_test unit/kilnc_helpers_test.cpp)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/../views/tests.cmake)  # kilnc_render_test and kilnc's error tests

# --- kiln's generators (tools/kiln/generate): names, fields, migrations, plans ---
if(TARGET kiln_generate)
  kiln_test(kiln_generate_test unit/kiln_generate_test.cpp DEPS kiln_generate)
endif()

# --- server/config: key rules and refusals (regressions from tests/fuzz/fuzz_config) ---
if(TARGET kiln)
  kiln_test(config_test unit/config_test.cpp)
  kiln_test(secret_handoff_test unit/secret_handoff_test.cpp)
  kiln_test(ticket_segment_test unit/ticket_segment_test.cpp)
endif()
