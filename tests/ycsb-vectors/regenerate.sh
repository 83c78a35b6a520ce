#!/usr/bin/env bash
# Rebuilds the YCSB reference vectors in data/ by running YCSB core 0.17.0's
# own CoreWorkload (fetched from Maven Central). Needs Java 17+ and Maven 3.
# YCSB's RNG is unseeded, so distribution shares change slightly on every run.
set -euo pipefail
cd "$(dirname "$0")"
mvn -B -q package
mvn -B -q exec:java -Dexec.args="$PWD/data"
ls -l data
