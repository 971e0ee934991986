#!/bin/bash
# Runs the RDMA tests that need real verbs inside a QEMU guest with soft-RoCE (rdma_rxe):
# the DiSNI provider's JUnit tests (its conformance suite included) and the RTRS/RNBD
# end-to-end test over it, with plain java and the JUnit console launcher, then the hooks
# in rxe/guest.d/.
#
#   rxe/run-rxe-tests.sh            (after `mvn install` of bundles/rdma-disni)
#   rxe/run-rxe-tests.sh --bench    the RTRS load over DiSNI on rxe beside the soft provider on
#                                   loopback, in the same guest (io.rnbd.bench.RxeLoadMain; after
#                                   `mvn install -DskipTests -pl bench`); not part of CI
#
# Prints "skipped: <reason>" and exits 0 when the guest cannot be prepared or started
# (no root for apt, no network for the kernel, no qemu). Exit 1: tests failed;
# 99: the guest never reported a result (crash or timeout).
#
# Env: RXE_WORK     work dir (kernel, initramfs, logs)   default ${TMPDIR:-/tmp}/rnbd-rxe
#      RXE_TIMEOUT  seconds for the whole guest run       default 570
#      RXE_TESTS    test classes (space separated)         default: the rdma-disni RDMA tests
#      RXE_TIMEOUT_FACTOR  tests multiply their waits by it default 20 (TCG is ~15-20x slower)
#      RXE_ADDR     the rxe device's IPv4 address          default 198.51.100.1 (TEST-NET-2)
#      RXE_HOTPLUG_ADDR  the second device (deleted and re-added by the hot-unplug test)
#                   default 203.0.113.1 (TEST-NET-3)
#      RXE_BENCH_ARGS  --bench: RxeLoadMain's options    default "--seconds 5 --reps 2 --warmup 20"
#      RXE_JAVA_OPTS   extra options for the guest JVM (diagnosis, e.g. -Xcheck:jni)  default none
#      RXE_CPU      QEMU -cpu model                        default max,avx=off (rxe/README.md,
#                   "Known issue": guest JVM crashes in JIT code with TCG's AVX)
#      RXE_NO_APT=1 never run apt-get (skip instead when something is missing)
#      SMP / MEM    guest CPUs / memory                    default nproc / 4G
set -u
MODE=tests
case "${1:-}" in
  --bench) MODE=bench ;;
  "") ;;
  *) echo "usage: $0 [--bench]"; exit 2 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
PROJECT=$(dirname "$HERE")
WORK=${RXE_WORK:-${TMPDIR:-/tmp}/rnbd-rxe}
OUT=$WORK/out
KROOT=$WORK/kroot
MODULE=$PROJECT/bundles/rdma-disni
NATIVE_DIR=$MODULE/target/native
CONSOLE_VERSION=1.11.4
T00=$(date +%s)
stamp() { echo "RXE[+$(( $(date +%s) - T00 ))s] $*"; }
skip() { echo "skipped: $*"; exit 0; }
mkdir -p "$WORK/cache" || skip "cannot create $WORK"

# --- 1. host packages ---------------------------------------------------------------
need_pkgs=()
for p in qemu-system-x86 busybox-static cpio kmod iproute2 rdma-core ibverbs-providers; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_pkgs+=("$p")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  [ "${RXE_NO_APT:-0}" = 1 ] && skip "missing packages ${need_pkgs[*]} (RXE_NO_APT=1)"
  [ "$(id -u)" = 0 ] || skip "missing packages ${need_pkgs[*]} and not root"
  stamp "apt-get install ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"; } >"$WORK/apt.log" 2>&1 \
    || skip "apt-get install ${need_pkgs[*]} failed (see $WORK/apt.log)"
fi

# --- 2. the Debian kernel (it has rdma_rxe), unpacked, and the initramfs -------------
KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}')
[ -n "$KPKG" ] || skip "cannot resolve linux-image-amd64 (apt-get update needed?)"
KVER=${KPKG#linux-image-}
if [ ! -f "$KROOT/boot/vmlinuz-$KVER" ]; then
  stamp "kernel $KPKG"
  ls "$WORK/cache/${KPKG}"_*.deb >/dev/null 2>&1 \
    || (cd "$WORK/cache" && apt-get download -q "$KPKG" >"$WORK/kernel-download.log" 2>&1) \
    || skip "cannot download $KPKG (see $WORK/kernel-download.log)"
  rm -rf "$KROOT"
  dpkg -x "$WORK/cache/${KPKG}"_*.deb "$KROOT" || skip "cannot unpack $KPKG"
  depmod -b "$KROOT" "$KVER"
fi
[ -f "$KROOT/lib/modules/$KVER/modules.dep" ] || depmod -b "$KROOT" "$KVER"
grep -q "rdma_rxe.ko" "$KROOT/lib/modules/$KVER/modules.dep" || skip "$KPKG has no rdma_rxe module"
if [ ! -f "$WORK/initramfs-$KVER.cpio.gz" ]; then
  "$HERE/lib/build-initramfs.sh" "$KROOT" "$WORK/initramfs-$KVER.cpio.gz" || skip "initramfs build failed"
fi

# --- 3. what the guest runs: libdisni.so, test classpath, console launcher ------------
if [ ! -f "$NATIVE_DIR/libdisni.so" ]; then
  sh "$MODULE/src/main/c/build.sh" "${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac || command -v java)")")")}" "$NATIVE_DIR"
  [ -f "$NATIVE_DIR/libdisni.so" ] || skip "libdisni.so not built (needs gcc, libibverbs-dev, librdmacm-dev)"
fi
mkdir -p "$OUT" "$WORK/crashes"
# a guest JVM crash report outlives the next run (a retry must not wipe the evidence)
for f in "$OUT"/hs_err_pid*.log; do [ -f "$f" ] && mv "$f" "$WORK/crashes/$(date +%Y%m%d-%H%M%S)-$(basename "$f")"; done
rm -rf "$OUT"/rc "$OUT"/reports "$OUT"/*.log
JAVA=$(readlink -f "$(command -v java)")
BENCH_JAR=$PROJECT/bench/target/benchmarks.jar
if [ "$MODE" = bench ]; then
  [ -f "$BENCH_JAR" ] && unzip -l "$BENCH_JAR" 2>/dev/null | grep -q 'io/rnbd/bench/RxeLoadMain.class' \
    || { echo "FAILED: build the benchmarks first (mvn install -DskipTests -pl bench)"; exit 1; }
  CLASSES="" CONSOLE_JAR=""
  TIMEOUT=${RXE_TIMEOUT:-900}
else
[ -d "$MODULE/target/test-classes" ] || { echo "FAILED: build bundles/rdma-disni first (mvn install -DskipTests -pl bundles/rdma-disni -am, from the project root)"; exit 1; }
MVN=(mvn -B -q -f "$PROJECT/bundles/pom.xml" -pl rdma-disni)
"${MVN[@]}" -o dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$OUT/deps.cp" >"$WORK/mvn.log" 2>&1 \
  || "${MVN[@]}" dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$OUT/deps.cp" >>"$WORK/mvn.log" 2>&1 \
  || { echo "FAILED: cannot resolve the test classpath (see $WORK/mvn.log)"; exit 1; }
echo "$MODULE/target/test-classes:$MODULE/target/classes:$(cat "$OUT/deps.cp")" > "$OUT/classpath"
CONSOLE_JAR=$HOME/.m2/repository/org/junit/platform/junit-platform-console-standalone/$CONSOLE_VERSION/junit-platform-console-standalone-$CONSOLE_VERSION.jar
if [ ! -f "$CONSOLE_JAR" ]; then
  mvn -B -q dependency:get -Dartifact=org.junit.platform:junit-platform-console-standalone:$CONSOLE_VERSION >>"$WORK/mvn.log" 2>&1 \
    || skip "cannot fetch junit-platform-console-standalone $CONSOLE_VERSION (see $WORK/mvn.log)"
fi
TESTS=${RXE_TESTS:-"io.rnbd.rdma.disni.DisniRxeTest io.rnbd.rdma.disni.DisniProviderConformanceTest io.rnbd.rdma.disni.DisniHotplugTest io.rnbd.rdma.disni.DisniRnbdEndToEndTest"}
CLASSES=""
for t in $TESTS; do
  [ -f "$MODULE/target/test-classes/${t//.//}.class" ] && CLASSES="$CLASSES $t" || stamp "no test class $t (not built yet): left out"
done
[ -n "$CLASSES" ] || { echo "FAILED: none of the test classes exist: $TESTS"; exit 1; }
TIMEOUT=${RXE_TIMEOUT:-570}
fi
cat > "$OUT/guest.env" <<ENV
MODE=$MODE
BENCH_JAR=$(printf %q "$BENCH_JAR")
BENCH_ARGS=$(printf %q "${RXE_BENCH_ARGS:---seconds 5 --reps 2 --warmup 20}")
JAVA_OPTS=$(printf %q "${RXE_JAVA_OPTS:-}")
KROOT=$(printf %q "$KROOT")
PROJECT=$(printf %q "$PROJECT")
JAVA=$(printf %q "$JAVA")
NATIVE_DIR=$(printf %q "$NATIVE_DIR")
CONSOLE_JAR=$(printf %q "$CONSOLE_JAR")
TEST_CLASSES=$(printf %q "${CLASSES# }")
RDMA_TEST_ADDR=${RXE_ADDR:-198.51.100.1}
RDMA_HOTPLUG_ADDR=${RXE_HOTPLUG_ADDR:-203.0.113.1}
TIMEOUT_FACTOR=${RXE_TIMEOUT_FACTOR:-20}
JUNIT_TIMEOUT=$(( TIMEOUT - 45 ))
ENV

# --- 4. boot (TCG: nested KVM does not run a stock kernel here, see rxe/README.md) ---
stamp "booting $KVER (timeout ${TIMEOUT}s)"
T0=$(date +%s)
timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg,thread=multi,tb-size=512 -cpu "${RXE_CPU:-max,avx=off}" \
  -smp "${SMP:-$(nproc)}" -m "${MEM:-4G}" -nographic -no-reboot -nodefaults -serial stdio \
  -kernel "$KROOT/boot/vmlinuz-$KVER" -initrd "$WORK/initramfs-$KVER.cpio.gz" \
  -append "console=ttyS0 panic=-1 quiet loglevel=3 guest_init=$HERE/lib/guest-init.sh rxe_out=$OUT" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$OUT,mount_tag=out,security_model=none" \
  -nic none < /dev/null 2>"$WORK/qemu.err" | sed -u 's/\r$//' | tee "$WORK/console.log"
QRC=${PIPESTATUS[0]}
stamp "qemu exited rc=$QRC after $(( $(date +%s) - T0 ))s"
if [ ! -f "$OUT/rc" ]; then
  if [ "$QRC" = 124 ]; then echo "FAILED: guest timed out after ${TIMEOUT}s"; exit 99; fi
  grep -q . "$WORK/qemu.err" && ! grep -q "GUEST\[" "$WORK/console.log" \
    && skip "qemu could not start: $(head -1 "$WORK/qemu.err")"
  echo "FAILED: guest died without a result (see $WORK/console.log)"
  exit 99
fi
RC=$(cat "$OUT/rc")
for f in "$OUT"/hs_err_pid*.log; do
  [ -f "$f" ] || continue
  # the guest JVM crashed: the lines that say where, in the log itself (CI keeps no files)
  echo "RXE: guest JVM crash report $f (kept in $WORK/crashes by the next run):"
  grep -m1 '^# *SIG' "$f" | sed 's/^/RXE:   /'
  grep -m1 -A1 '^# Problematic frame' "$f" | sed 's/^/RXE:   /'
  grep -m1 '^Current thread' "$f" | sed 's/^/RXE:   /'
  sed -n '/^Native frames:/,/^$/p' "$f" | head -25 | sed 's/^/RXE:   /'
  grep -m1 '^siginfo' "$f" | sed 's/^/RXE:   /'
done
if [ "$MODE" = bench ]; then
  echo "RXE: RxeLoadMain in the guest (log $OUT/bench.log):"
  sed -n '/^| point/,$p' "$OUT/bench.log"
  [ "$RC" = 0 ] && stamp "bench PASSED" || stamp "bench FAILED rc=$RC (log $OUT/bench.log)"
  exit "$RC"
fi
grep -E "tests (successful|failed|aborted|skipped)" "$OUT/junit.log" | sed 's/^/RXE: /'
if [ "$RC" = 0 ]; then
  stamp "PASSED (reports in $OUT/reports)"
else
  stamp "FAILED rc=$RC (reports in $OUT/reports, console in $WORK/console.log)"
fi
exit "$RC"
