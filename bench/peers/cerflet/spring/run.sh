#!/usr/bin/env bash
# Serves Cerflet's hello page on Spring Boot at 127.0.0.1:PORT in the foreground
# (java -jar, JVM and Tomcat defaults).
set -euo pipefail
port=${1:?usage: run.sh PORT}
here=$(cd "$(dirname "$0")" && pwd)
exec java -jar "$here/target/cerflet-hello-spring.jar" --server.port="$port"
