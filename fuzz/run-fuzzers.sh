#!/bin/sh
# Fuzz longer than `mvn verify` does: each Jazzer target for DURATION (default 10m), one
# after the other, each in its own JVM (Jazzer fuzzes one test per run).
#
#   fuzz/run-fuzzers.sh [DURATION] [TARGET...]      e.g. fuzz/run-fuzzers.sh 30m ServerSessionFuzzTest-session
#
# TARGETs are the execution ids of fuzz/pom.xml without "fuzz-" (Class-method); all by default.
# Extra Maven flags in MVN_FLAGS (e.g. MVN_FLAGS=-o). Logs: fuzz/target/fuzz-logs/<target>.log.
# A finding stops that target and is written to its inputs directory as crash-<sha1>
# (src/test/resources/.../<Class>Inputs/<method>/); the script goes on with the next target
# and exits 1 at the end if there was any.
set -eu
cd "$(dirname "$0")/.."
duration=${1:-10m}
[ $# -gt 0 ] && shift
targets=${*:-$(grep -o '<id>fuzz-[A-Za-z]*-[A-Za-z]*</id>' fuzz/pom.xml | sed 's/<id>fuzz-//; s/<\/id>//')}
flags=${MVN_FLAGS:-}
mvn -B -q $flags -pl fuzz -am install -DskipTests
mkdir -p fuzz/target/fuzz-logs
failed=0
for t in $targets; do
    log=fuzz/target/fuzz-logs/$t.log
    start=$(date +%s)
    if mvn -B $flags -pl fuzz "surefire:test@fuzz-$t" -Dfuzz.duration="$duration" >"$log" 2>&1; then
        result=ok
    else
        result=FINDING
        failed=1
    fi
    # libFuzzer's last status line: executions, coverage, corpus
    stats=$(grep -aho '^#[0-9]*.*\(DONE\|pulse\|REDUCE\|NEW\).*' "$log" fuzz/target/fuzz-reports/$t/*-output.txt 2>/dev/null \
        | tail -1 | sed 's/ MS:.*//')
    echo "$t: $result after $(( $(date +%s) - start )) s; $stats"
done
exit $failed
