#!/usr/bin/env bash
# Builds bench/peers/spring/target/generic-spring.jar with Maven; Maven's repository
# is bench/peers/spring/.m2 (offline once it is filled).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v mvn >/dev/null && command -v java >/dev/null ||
  { echo "spring peer: mvn and java are needed on PATH" >&2; exit 1; }
cd "$here"
jar=target/generic-spring.jar
if [[ -f $jar && -z $(find pom.xml src -newer "$jar" -print -quit) ]]; then exit 0; fi
mvn_args=(-q -B -Dmaven.repo.local="$here/.m2" -DskipTests package)
if ! flock /tmp/kiln-build.lock mvn -o "${mvn_args[@]}" >/tmp/kiln-spring-mvn.$$.log 2>&1; then
  flock /tmp/kiln-build.lock mvn "${mvn_args[@]}" >/tmp/kiln-spring-mvn.$$.log 2>&1 || {
    tail -20 /tmp/kiln-spring-mvn.$$.log >&2; rm -f /tmp/kiln-spring-mvn.$$.log
    echo "spring peer: mvn package failed (Maven Central unreachable?)" >&2; exit 1; }
fi
rm -f /tmp/kiln-spring-mvn.$$.log
[[ -f $jar ]] || { echo "spring peer: $jar was not built" >&2; exit 1; }
touch "$jar"  # Maven leaves an unchanged jar's time alone; mark it as checked against the sources
