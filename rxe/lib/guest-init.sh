#!/bin/bash
# PID 1 inside the QEMU guest. The guest's / is the host's / (virtio-9p, read-only)
# under a tmpfs overlay, so the host's JDK, jars and libdisni.so are all here at their
# host paths. The rw share rxe_out= (kernel command line) carries guest.env in and the
# logs, JUnit reports and exit code out.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
up() { cut -d' ' -f1 /proc/uptime; }
log() { echo "GUEST[$(up)] $*"; }
OUT=$(sed -n 's/.*rxe_out=\([^ ]*\).*/\1/p' /proc/cmdline)
finish() { log "done rc=$1"; echo "$1" > "$OUT/rc"; sync; echo o > /proc/sysrq-trigger; sleep 10; }

mount -t tmpfs tmpfs /run
mkdir -p "$OUT" /dev/pts /dev/shm
mount -t 9p -o trans=virtio,version=9p2000.L,rw,msize=512000 out "$OUT" || { echo "no out share"; echo o > /proc/sysrq-trigger; }
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# shellcheck disable=SC1091
. "$OUT/guest.env"
mkdir -p "/lib/modules/$(uname -r)" && mount --bind "$KROOT/lib/modules/$(uname -r)" "/lib/modules/$(uname -r)"
hostname rxeguest
ip link set lo up
ulimit -l unlimited

# rdma_cm cannot resolve 127.0.0.1 over rxe on lo, so rxe sits on a dummy netdev with a
# TEST-NET address; the guest has no NIC, nothing leaves the VM.
log "setting up rxe0 on dummy0 ($RDMA_TEST_ADDR)"
modprobe rdma_rxe && modprobe rdma_ucm && modprobe ib_uverbs && modprobe dummy \
  && ip link add dummy0 type dummy && ip addr add "$RDMA_TEST_ADDR/24" dev dummy0 \
  && ip link set dummy0 up && rdma link add rxe0 type rxe netdev dummy0 \
  || { log "rxe setup failed"; finish 97; }
# a second stable device, so that a session can have two paths over two devices (interop
# tests: Linux's rnbd-client with path=ip:$RDMA_TEST_ADDR path=ip:$RDMA_TEST_ADDR2)
ip link add dummy1 type dummy && ip addr add "$RDMA_TEST_ADDR2/24" dev dummy1 \
  && ip link set dummy1 up && rdma link add rxe1 type rxe netdev dummy1 \
  || { log "rxe1 setup failed"; finish 97; }
# a third for the hot-unplug test, which deletes and re-adds it (librdmacm never lets go of a
# process's last device, and the stable two must stay for the tests after it)
ip link add dummy2 type dummy && ip addr add "$RDMA_HOTPLUG_ADDR/24" dev dummy2 \
  && ip link set dummy2 up && rdma link add rxe2 type rxe netdev dummy2 \
  || { log "rxe2 setup failed"; finish 97; }
# a fourth whose link SlowBackendPathFailureTest takes down and leaves down: 6.1's rxe hangs in
# `rdma link delete` of a device whose netdev went down (CI run 39: rxe1, blocked past 5 min,
# every class after it lost rxe1), and rxe does not come back from down/up on any kernel
ip link add dummy3 type dummy && ip addr add "$RDMA_LINKDOWN_ADDR/24" dev dummy3 \
  && ip link set dummy3 up && rdma link add rxe3 type rxe netdev dummy3 \
  || { log "rxe3 setup failed"; finish 97; }
# a fifth for the other direction's link-down test (ApplianceFailuresOnLinuxTest: the appliance's
# client on Linux's server), taken down and left down as rxe3 is, whatever the classes' order
ip link add dummy4 type dummy && ip addr add "$RDMA_LINKDOWN_ADDR2/24" dev dummy4 \
  && ip link set dummy4 up && rdma link add rxe4 type rxe netdev dummy4 \
  || { log "rxe4 setup failed"; finish 97; }
export RDMA_TEST_ADDR RDMA_TEST_ADDR2 RDMA_HOTPLUG_ADDR RDMA_LINKDOWN_ADDR RDMA_LINKDOWN_ADDR2
log "rdma devices: $(ls /sys/class/infiniband | tr '\n' ' ')"

rc=0
cd "$PROJECT" || finish 98
if [ "$MODE" = bench ]; then
  # run-rxe-tests.sh --bench: the RTRS load over DiSNI on rxe0 and over the soft provider on lo
  log "bench: RxeLoadMain $BENCH_ARGS"
  # shellcheck disable=SC2086
  timeout "$JUNIT_TIMEOUT" "$JAVA" --add-exports java.base/sun.nio.ch=ALL-UNNAMED -XX:ErrorFile="$OUT/hs_err_pid%p.log" \
    -Xms1g -Xmx1g -XX:MaxDirectMemorySize=1g -Djava.library.path="$NATIVE_DIR" $JAVA_OPTS \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    -cp "$BENCH_JAR" io.rnbd.bench.RxeLoadMain $BENCH_ARGS > "$OUT/bench.log" 2>&1
  r=$?
  cat "$OUT/bench.log"
  [ $r -eq 0 ] || log "bench FAILED ($r)"
  finish $(( r == 0 ? 0 : 1 ))
fi
# the file backend's librnbd-file.so (fallocate: punch hole, zero range) beside libdisni.so, so
# that the appliance in the guest trims and zeroes as the shipped bundle does, not by writing zeros;
# and the RBD backend's librnbd-rbd.so, for RbdBackendPathFailureTest (rxe/run-rbd-guest.sh)
NATIVE_DIR="$NATIVE_DIR:$PROJECT/bundles/rnbd-backend-file/target/classes/native:$PROJECT/bundles/rnbd-backend-rbd/target/classes/native"
if [ -n "$TEST_CLASSES" ]; then
log "JUnit: $TEST_CLASSES"
SEL=()
for c in $TEST_CLASSES; do SEL+=(--select-class "$c"); done
# A kernel oops (in Linux's RTRS/RNBD, rxe, the block layer) kills the kworker it ran on, and
# with it a workqueue: every test after it then hangs until the guest's timeout, and CI learns
# only "no result" (CI runs 5 and 13: 7.3's rtrs_server). So the first oops ends the run: the
# test it happened in, the oops (and the whole kernel log, dmesg.log) and the JVM's threads go
# to the log, and the guest powers off with rc 3 (run-rxe-tests.sh prints them).
oops_watch() {
  local jvm
  while sleep 5; do
    dmesg | grep -qE "$OOPS_RE" || continue
    sleep 15   # the rest of the oops, and the test's own failure if it still gets one
    { echo "kernel oops during: $(last_test "$OUT/junit.log")"; dmesg | OOPS_LINES=120 oops_report; } > "$OUT/oops.log"
    dmesg > "$OUT/dmesg.log"   # all of it: what the modules said before, at every level
    jvm=$(pgrep -f "$CONSOLE_JAR" | head -1)
    [ -n "$jvm" ] && kill -QUIT "$jvm" && sleep 3   # the threads, into junit.log
    cat "$OUT/oops.log"
    finish 3
  done
}
# A hang shows only as an idle guest until its timeout (tens of minutes), the cause lost with
# it. So when junit.log has not grown for STALL_S seconds (no test here is quiet that long),
# the JVM's threads (into junit.log) and the kernel's blocked tasks (sysrq w) and log go to
# stall.log, once; the run goes on, and run-rxe-tests.sh prints them if it then fails.
stall_watch() {
  local size last=-1 quiet=0 jvm
  while sleep 30; do
    size=$(stat -c %s "$OUT/junit.log" 2>/dev/null || echo 0)
    if [ "$size" != "$last" ]; then last=$size; quiet=0; continue; fi
    quiet=$((quiet + 30))
    [ "$quiet" -ge "${STALL_S:-420}" ] || continue
    jvm=$(pgrep -f "$CONSOLE_JAR" | head -1)
    [ -n "$jvm" ] && kill -QUIT "$jvm"
    echo w > /proc/sysrq-trigger
    sleep 5
    { echo "no test output for ${quiet}s, during: $(last_test "$OUT/junit.log")"; dmesg | tail -150; } > "$OUT/stall.log"
    log "stalled: no test output for ${quiet}s (threads in junit.log, blocked tasks in stall.log)"
    return
  done
}
# shellcheck source=oops.sh
. "$(dirname "$0")/oops.sh"
oops_watch & WATCH=$!
stall_watch & STALL=$!
# shellcheck disable=SC2086
timeout "$JUNIT_TIMEOUT" "$JAVA" --add-exports java.base/sun.nio.ch=ALL-UNNAMED -XX:ErrorFile="$OUT/hs_err_pid%p.log" $JAVA_OPTS \
  -Djava.library.path="$NATIVE_DIR" -Drnbd.rdma.require=true -Drnbd.rdma.hotplug=true -Drnbd.rdma.timeout.factor="$TIMEOUT_FACTOR" \
  -Drxe.classpath.file="$OUT/classpath" \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=info -Dorg.slf4j.simpleLogger.log.com.ibm.disni=warn \
  -jar "$CONSOLE_JAR" execute --class-path "$(cat "$OUT/classpath")" "${SEL[@]}" \
  --reports-dir "$OUT/reports" --fail-if-no-tests --disable-banner --details=tree \
  > "$OUT/junit.log" 2>&1
r=$?
kill "$WATCH" "$STALL" 2>/dev/null
cat "$OUT/junit.log"
[ $r -eq 0 ] || { log "JUnit FAILED ($r)"; rc=1; }
fi

# Hook for later end-to-end tests (RTRS/RNBD over rxe): every executable *.sh in HOOKS
# (rxe/guest.d unless RXE_GUEST_HOOKS names another directory, e.g. rxe/crash-study) runs
# here with RDMA_TEST_ADDR(2), JAVA, NATIVE_DIR, CONSOLE_JAR and OUT set; non-zero fails the run.
for hook in "${HOOKS:-$PROJECT/rxe/guest.d}"/*.sh; do
  [ -x "$hook" ] || continue
  log "hook $hook"
  export JAVA NATIVE_DIR OUT PROJECT CONSOLE_JAR TIMEOUT_FACTOR
  for kv in ${GUEST_ENV:-}; do export "${kv?}"; done
  timeout "$JUNIT_TIMEOUT" "$hook" > "$OUT/$(basename "$hook").log" 2>&1
  r=$?
  cat "$OUT/$(basename "$hook").log"
  [ $r -eq 0 ] || { log "hook $hook FAILED ($r)"; rc=1; }
done
finish $rc
