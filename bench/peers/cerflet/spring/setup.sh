#!/usr/bin/env bash
# Builds bench/peers/cerflet/spring/target/cerflet-hello-spring.jar with Maven (its
# packages cached in ~/.m2; Maven Central is asked only when the cache lacks them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v mvn >/dev/null && command -v java >/dev/null ||
  { echo "cerflet spring peer: mvn and java are needed on PATH" >&2; exit 1; }
cd "$here"
jar=target/cerflet-hello-spring.jar
if [[ -f $jar && -z $(find pom.xml src -newer "$jar" -print -quit) ]]; then exit 0; fi
log=$(mktemp /tmp/kiln-cerflet-mvn.XXXXXX)
mvn_args=(-q -B -DskipTests package)
if ! timeout 900 flock /tmp/kiln-build.lock mvn -o "${mvn_args[@]}" >"$log" 2>&1; then
  timeout 900 flock /tmp/kiln-build.lock mvn "${mvn_args[@]}" >"$log" 2>&1 || {
    tail -20 "$log" >&2; rm -f "$log"
    echo "cerflet spring peer: mvn package failed (Maven Central unreachable?)" >&2; exit 1; }
fi
rm -f "$log"
[[ -f $jar ]] || { echo "cerflet spring peer: $jar was not built" >&2; exit 1; }
touch "$jar"  # Maven leaves an unchanged jar's time alone; mark it as checked against the sources
