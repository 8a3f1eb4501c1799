# Layers above kiln_proto (included from src/CMakeLists.txt).
add_library(kiln STATIC
  util/log.cpp
  net/buffer.cpp
  net/timer.cpp
  net/loop.cpp
  net/listener.cpp
  net/output.cpp
  http/date.cpp
  http/status.cpp
  http/serializer.cpp
  http/connection.cpp
  http/server.cpp
  view/escape.cpp
  app/request.cpp
  app/response.cpp
  app/router.cpp
  app/app.cpp
  server/flags.cpp
  server/run.cpp
)
target_include_directories(kiln PUBLIC ${PROJECT_SOURCE_DIR}/include PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(kiln PUBLIC kiln_proto pthread)

add_library(kiln_internal INTERFACE)
target_link_libraries(kiln_internal INTERFACE kiln)
target_include_directories(kiln_internal INTERFACE ${PROJECT_SOURCE_DIR}/src)
