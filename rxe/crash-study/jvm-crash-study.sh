#!/bin/bash
# Guest hook for the JVM crash study (rxe/README.md, "Known issue"); not part of CI:
#   RXE_GUEST_HOOKS=rxe/crash-study RXE_CPU=max RXE_TESTS=io.rnbd.rdma.disni.DisniRxeTest \
#     RXE_TIMEOUT=1000 rxe/run-rxe-tests.sh
# 1. glibc's memcpy/memmove/memset/memcmp from 4 threads on 2 vCPUs for 60 s, every result
#    verified (glibc takes its AVX2 variants when the CPU reports avx2): a mismatch is the
#    emulator computing wrongly, whatever the JVM does.
# 2. Until STUDY_SECS: DisniRxeTest (where the crashes were seen) in fresh JVMs, two loops in
#    parallel (contention, as in the crashing runs), one with the default JIT, one with
#    -XX:UseAVX=0 (no AVX in JIT code; glibc and the kernel still use it), counting crashes.
STUDY_SECS=${STUDY_SECS:-480}
. "$OUT/guest.env"   # CONSOLE_JAR etc. (the hook environment lacks it)
T0=$(date +%s)
echo "study: cpu flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx|avx2|fma|bmi2|avx512f|xsave|xsaveopt|xsavec|xsaves)$' | tr '\n' ' ')"
echo "study: CPU model: $(grep -m1 'model name' /proc/cpuinfo)"
gcc -O2 -pthread -o /run/memstress "$(dirname "$0")/memstress.c" && /run/memstress 4 60
CP=$(cat "$OUT/classpath")
loop() {   # loop CFG OPTS: fresh JVMs until the deadline, one line per run
  local cfg=$1 opts=$2 i=0 runs=0 crashes=0 fails=0
  while [ $(( $(date +%s) - T0 )) -lt "$STUDY_SECS" ]; do
    local log="$OUT/study-$cfg-$i.log" t r
    t=$(date +%s)
    timeout 400 "$JAVA" --add-exports java.base/sun.nio.ch=ALL-UNNAMED -XX:ErrorFile="$OUT/hs_err_pid%p.log" $opts \
      -Djava.library.path="$NATIVE_DIR" -Drnbd.rdma.require=true -Drnbd.rdma.timeout.factor=20 \
      -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -jar "$CONSOLE_JAR" execute --class-path "$CP" \
      --select-class io.rnbd.rdma.disni.DisniRxeTest --disable-banner --details=none > "$log" 2>&1
    r=$?
    runs=$((runs + 1)); [ $r -ne 0 ] && fails=$((fails + 1))
    grep -q 'A fatal error has been detected' "$log" && crashes=$((crashes + 1))
    echo "study: $cfg run $i rc=$r $(( $(date +%s) - t ))s $(grep -E 'tests (successful|failed)' "$log" | tr -s ' ' | tr '\n' ' ')"
    i=$((i + 1))
  done
  echo "study: $cfg runs=$runs crashes=$crashes failed=$fails"
}
loop default "" &
loop UseAVX0 "-XX:UseAVX=0" &
wait
ls "$OUT"/hs_err_pid*.log 2>/dev/null
exit 0
