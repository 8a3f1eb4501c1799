#!/usr/bin/env bash
# Serves the Spring Boot peer on 127.0.0.1:PORT in the foreground: java -jar with the
# JVM's and Tomcat's defaults (200 request threads), static files from the directory.
set -euo pipefail
port=${1:?usage: run.sh PORT}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
exec java -jar "$here/target/generic-spring.jar" --server.port="$port" \
  --generic.lorem="$root/examples/generic/lorem.html" \
  --spring.web.resources.static-locations="file:$root/examples/generic/public/"
