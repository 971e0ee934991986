#!/bin/bash
# Runs the RDMA tests that need real verbs inside a QEMU guest with soft-RoCE (rdma_rxe):
# the DiSNI provider's JUnit tests (its conformance suite included), the RTRS/RNBD
# end-to-end test over it and the interop tests of rxe/interop (Linux's own RTRS/RNBD
# modules, built here for the guest's kernel, and Linux's NBD client as the peers), all in
# one guest boot with plain java and the JUnit console launcher, then the hooks in rxe/guest.d/.
#
#   rxe/run-rxe-tests.sh            (after `mvn install -DskipTests -pl bundles/rdma-disni,rxe/interop -am`)
#   rxe/run-rxe-tests.sh --prepare  only the kernel, its initramfs and Linux's modules (no boot):
#                                   what rxe/run-kernel-matrix.sh does for each kernel first
#   rxe/run-rxe-tests.sh --bench    the RTRS load over DiSNI on rxe beside the soft provider on
#                                   loopback, in the same guest (io.rnbd.bench.RxeLoadMain; after
#                                   `mvn install -DskipTests -pl bench`); not part of CI
#
# Exit 0: every test passed. 1: a test failed, or something the tests need could not be
# built. 99: the guest never reported a result (guest crash or timeout): no result is a
# failure, never a pass. 77: "skipped: <reason>" where the guest cannot be prepared or
# started at all (no root for apt, no network for the kernel, no qemu); .ci/run fails on it
# too, since CI installs what it needs (rxe/README.md).
#
# Env: RXE_WORK     work dir (kernel, initramfs, logs)   default ${TMPDIR:-/tmp}/rnbd-rxe
#      RXE_TIMEOUT  seconds for the whole guest run       default 1200
#      RXE_RUN      a name for this run: its results go to RXE_WORK/out-<name> and console-<name>.log
#                   (default: out/ and console.log), so guests of several kernels can run at once
#      RXE_TESTS    test classes (space separated)         default: the rdma-disni RDMA tests
#                   and rxe/interop's; "-": none, only the guest hooks
#      RXE_TIMEOUT_FACTOR  tests multiply their waits by it default 20 (TCG is ~15-20x slower)
#      RXE_LOGLEVEL the guest console's kernel loglevel      default 3 (errors above KERN_ERR:
#                   oopses, BUGs); 7 puts rtrs/rnbd's own messages on the console too
#      RXE_CMDLINE  more kernel parameters for the guest     default none (diagnosis, e.g.
#                   "slub_debug=FZPU": the slab allocator checks its objects and names the cache
#                   and the last allocation and free of one that was overwritten)
#      RXE_KERNEL   stable: linux-image-amd64 of the host's release (default);
#                   backports: linux-image-amd64 of <release>-backports, through a private apt
#                   list under RXE_WORK (the host's apt sources are not touched)
#      RXE_ADDR     rxe0's IPv4 address (dummy0)            default 198.51.100.1 (TEST-NET-2)
#      RXE_ADDR2    rxe1's IPv4 address (dummy1): a second stable device, for two paths
#                   default 192.0.2.1 (TEST-NET-1)
#      RXE_HOTPLUG_ADDR  rxe2's (dummy2), deleted and re-added by the hot-unplug test
#                   default 203.0.113.1 (TEST-NET-3)
#      RXE_LINKDOWN_ADDR rxe3's (dummy3), whose link the slow-backend test takes down for good
#                   default 198.18.0.1 (RFC 2544)
#      RXE_LINKDOWN_ADDR2 rxe4's (dummy4), the same for the appliance's client on Linux's
#                   server (ApplianceFailuresOnLinuxTest)  default 198.19.0.1 (RFC 2544)
#      RXE_BENCH_ARGS  --bench: RxeLoadMain's options    default "--seconds 5 --reps 2 --warmup 20"
#      RXE_GUEST_HOOKS directory of guest hooks (*.sh)   default rxe/guest.d (rxe/crash-study: the
#                   JVM crash study of rxe/README.md)
#      RXE_GUEST_ENV   NAME=VALUE ... exported to the guest hooks (bench/linux-peer-ratio.sh)
#      RXE_JAVA_OPTS   extra options for the guest JVM (diagnosis, e.g. -Xcheck:jni)  default none
#      RXE_STALL_S  seconds without test output after which the guest dumps the JVM's threads and
#                   the kernel's blocked tasks (stall.log, printed if the run fails)  default 420
#      RXE_CPU      QEMU -cpu model                        default max,avx=off (rxe/README.md,
#                   "Known issue": guest JVM crashes in JIT code with TCG's AVX)
#      RXE_TCG_THREAD  QEMU TCG threading: single (default) or multi (rxe/README.md, "Known
#                   issue": with multi, a vCPU can translate code another vCPU is patching)
#      RXE_NO_APT=1 never run apt-get (skip instead when something is missing)
#      SMP / MEM    guest CPUs / memory                    default nproc / 4G
set -u
MODE=tests
case "${1:-}" in
  --bench) MODE=bench ;;
  --prepare) MODE=prepare ;;
  "") ;;
  *) echo "usage: $0 [--bench|--prepare]"; exit 2 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/oops.sh
. "$HERE/lib/oops.sh"
PROJECT=$(dirname "$HERE")
WORK=${RXE_WORK:-${TMPDIR:-/tmp}/rnbd-rxe}
# RXE_RUN names a run, so that guests of several kernels can share one RXE_WORK (its caches) and
# boot at the same time (rxe/run-kernel-matrix.sh): each has its own out-<run>/ and console-<run>.log
RUN=${RXE_RUN:+-$RXE_RUN}
OUT=$WORK/out$RUN
CONSOLE=$WORK/console$RUN.log
KROOT=''   # $WORK/kroot/<kernel release>, set in step 2
MODULE=$PROJECT/bundles/rdma-disni
NATIVE_DIR=$MODULE/target/native
CONSOLE_VERSION=1.11.4
T00=$(date +%s)
stamp() { echo "RXE[+$(( $(date +%s) - T00 ))s] $*"; }
skip() { echo "skipped: $*"; exit 77; }
PREP_FAILED=""   # something the tests need could not be built: the guest still runs the rest, the run fails
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
# RXE_KERNEL names the suites the kernel comes from; all but stable are read through a private
# apt state under RXE_WORK (apt-get/apt-cache here and in lib/ read APT_CONFIG), from the
# mirrors the host already uses. The host's apt sources are never touched.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
case "${RXE_KERNEL:-stable}" in
  stable)    SUITES="" ;;
  backports) SUITES="$codename-backports" ;;
  trixie)    SUITES="trixie trixie-security" ;;
  unstable)  SUITES="sid" ;;
  newest)    SUITES="sid experimental" ;;   # whichever is newer: experimental's release candidate or unstable's release
  *) echo "FAILED: RXE_KERNEL must be stable, backports, trixie, unstable or newest, not ${RXE_KERNEL}"; exit 1 ;;
esac
apt_fresh() {   # apt_fresh LISTS-DIR: were its lists fetched in the last 6 hours?
  [ -n "$(find "$1" -maxdepth 1 -name '*Packages*' -mmin -360 2>/dev/null | head -1)" ]
}
if [ -n "$SUITES" ]; then
  host_mirror() { apt-cache policy 2>/dev/null | awk -v s="$1/main" '$3 == s && $2 ~ /^https?:/ {print $2; exit}'; }
  main_mirror=$(host_mirror "$codename")
  security_mirror=$(host_mirror "$codename-security")
  [ -n "$codename" ] && [ -n "$main_mirror" ] || skip "RXE_KERNEL=${RXE_KERNEL}: no apt source for $codename/main to take the mirror from"
  APTDIR=$WORK/apt-${RXE_KERNEL}
  mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/sources.list.d"
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  : > "$APTDIR/sources.list.new"
  for s in $SUITES; do
    m=$main_mirror
    case "$s" in *-security) m=${security_mirror:-${main_mirror%/debian}/debian-security} ;; esac
    echo "deb${keyring:+ [signed-by=$keyring]} $m $s main" >> "$APTDIR/sources.list.new"
  done
  cmp -s "$APTDIR/sources.list.new" "$APTDIR/sources.list" || rm -f "$APTDIR"/lists/*Packages*
  mv "$APTDIR/sources.list.new" "$APTDIR/sources.list"
  cat > "$APTDIR/apt.conf" <<APT
Dir::Etc::SourceList "$APTDIR/sources.list";
Dir::Etc::SourceParts "$APTDIR/sources.list.d";
Dir::State::Lists "$APTDIR/lists";
Dir::Cache "$APTDIR/cache";
APT
  export APT_CONFIG=$APTDIR/apt.conf
  # where lib/build-chroot.sh builds Linux's modules when the host cannot (7.x: gcc-16)
  export RXE_SUITES=$SUITES RXE_MIRROR=$main_mirror RXE_SECURITY_MIRROR=$security_mirror
  if ! apt_fresh "$APTDIR/lists"; then
    stamp "apt-get update ($SUITES, private lists in $APTDIR)"
    apt-get update -q >"$WORK/apt-${RXE_KERNEL}.log" 2>&1 || skip "apt-get update of $SUITES failed (see $WORK/apt-${RXE_KERNEL}.log)"
  fi
elif ! apt_fresh /var/lib/apt/lists && [ "$(id -u)" = 0 ] && [ "${RXE_NO_APT:-0}" != 1 ]; then
  # the archive moves every few weeks: lists from another day name builds the mirror dropped
  stamp "apt-get update (the host's lists are older than 6 hours)"
  apt-get update -qq >"$WORK/apt.log" 2>&1 || stamp "apt-get update failed (see $WORK/apt.log); resolving from the lists there are"
fi
# the kernel set (image, headers, kbuild, source) by the rule in lib/resolve-kernel.sh
KSET=$("$HERE/lib/resolve-kernel.sh" 2> >(sed 's/^/RXE: /' >&2)) \
  || skip "no complete kernel set for RXE_KERNEL=${RXE_KERNEL:-stable} in the archive (reasons above)"
eval "$KSET"
KIMGVER=$IMGVER
KVER=${KPKG#linux-image-}
# one tree per kernel release, so stable and backports stay cached side by side; .deb-version
# says which build of the image it is (the modules below must be built for exactly that one)
KROOT=$WORK/kroot/$KVER
[ -d "$WORK/kroot/boot" ] && rm -rf "$WORK/kroot"   # the layout before one tree per release
if [ ! -f "$KROOT/boot/vmlinuz-$KVER" ] || [ "$(cat "$KROOT/.deb-version" 2>/dev/null)" != "$KIMGVER" ]; then
  stamp "kernel $KPKG${IMGPARTS:+ ($IMGPARTS)} $KIMGVER"
  rm -rf "$KROOT" "$WORK/initramfs-$KVER.cpio.gz"   # the initramfs carries this build's modules
  mkdir -p "$KROOT"
  # 7.x: the image package is empty and its parts hold vmlinuz and the modules
  for p in "$KPKG" $IMGPARTS; do
    deb="$WORK/cache/${p}_${KIMGVER//:/%3a}_amd64.deb"
    [ -f "$deb" ] || (cd "$WORK/cache" && apt-get download -q -o APT::Sandbox::User=root "$p=$KIMGVER" >>"$WORK/kernel-download.log" 2>&1)
    [ -f "$deb" ] || skip "cannot download $p $KIMGVER (see $WORK/kernel-download.log)"
    dpkg -x "$deb" "$KROOT" || skip "cannot unpack $deb"
  done
  # 7.x is merged-/usr (usr/lib/modules/<kver>/, vmlinuz beside the modules): the layout the
  # rest of this script, depmod -b and guest-init.sh expect is lib/modules and boot/
  if [ -d "$KROOT/usr/lib/modules/$KVER" ] && [ ! -d "$KROOT/lib/modules/$KVER" ]; then
    mkdir -p "$KROOT/lib/modules" && mv "$KROOT/usr/lib/modules/$KVER" "$KROOT/lib/modules/$KVER"
  fi
  if [ ! -f "$KROOT/boot/vmlinuz-$KVER" ] && [ -f "$KROOT/lib/modules/$KVER/vmlinuz" ]; then
    mkdir -p "$KROOT/boot" && mv "$KROOT/lib/modules/$KVER/vmlinuz" "$KROOT/boot/vmlinuz-$KVER"
  fi
  dpkg-deb -f "$WORK/cache/${KPKG}_${KIMGVER//:/%3a}_amd64.deb" Version > "$KROOT/.deb-version"
  depmod -b "$KROOT" "$KVER"
fi
# what the modules are built from (lib/build-linux-rtrs.sh reads it), resolved afresh each run
echo "$KSET" > "$KROOT/.kernel-set"
[ -f "$KROOT/lib/modules/$KVER/modules.dep" ] || depmod -b "$KROOT" "$KVER"
grep -q "rdma_rxe.ko" "$KROOT/lib/modules/$KVER/modules.dep" || skip "$KPKG has no rdma_rxe module"
if [ ! -f "$WORK/initramfs-$KVER.cpio.gz" ]; then
  "$HERE/lib/build-initramfs.sh" "$KROOT" "$WORK/initramfs-$KVER.cpio.gz" || skip "initramfs build failed"
fi

# --- 2b. Linux's own RTRS/RNBD modules for that kernel: the interop tests' peer -------------
if [ "$MODE" != bench ]; then
  TL=$(date +%s)
  if "$HERE/lib/build-linux-rtrs.sh" "$KROOT" "$KVER" "$WORK/linux-rtrs" 2>&1 | tee "$WORK/linux-rtrs.log" | sed 's/^/RXE: /'; \
     [ "${PIPESTATUS[0]}" = 0 ]; then
    stamp "linux-rtrs modules ready ($(( $(date +%s) - TL ))s)"
  else
    # the guest still runs (the other tests give their result); the interop tests fail there
    # at modprobe, and this run fails whatever they report
    PREP_FAILED="Linux's RTRS/RNBD modules for $KVER (see $WORK/linux-rtrs.log)"
    echo "FAILED: $PREP_FAILED"
  fi
fi

if [ "$MODE" = prepare ]; then
  [ -z "$PREP_FAILED" ] || exit 1
  stamp "prepared $KVER ($KIMGVER): $KROOT"
  exit 0
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
# The guest runs two modules' tests in one JVM: rdma-disni's real-verbs tests and
# rxe/interop's interop tests (Linux's modules and NBD client as peers).
TEST_MODULES=("$MODULE" "$PROJECT/rxe/interop")
# guests booted in parallel write the same target/rxe-guest.cp files: one at a time
exec 8>"$WORK/classpath.lock"
flock 8
for m in "${TEST_MODULES[@]}"; do
  [ -d "$m/target/test-classes" ] || { echo "FAILED: build ${m#"$PROJECT"/} first (mvn install -DskipTests -pl bundles/rdma-disni,rxe/interop -am, from the project root)"; exit 1; }
  rm -f "$m/target/rxe-guest.cp"
done
# one Maven start for both (each costs 10-30 s here); each module writes its own file
MVN=(mvn -B -q -f "$PROJECT/pom.xml" -pl "$(printf '%s\n' "${TEST_MODULES[@]#"$PROJECT"/}" | paste -sd,)" \
     dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/rxe-guest.cp)
"${MVN[@]}" -o >"$WORK/mvn.log" 2>&1 || "${MVN[@]}" >>"$WORK/mvn.log" 2>&1 \
  || { echo "FAILED: cannot resolve the test classpath (see $WORK/mvn.log)"; exit 1; }
cp=""
for m in "${TEST_MODULES[@]}"; do
  [ -f "$m/target/rxe-guest.cp" ] || { echo "FAILED: no test classpath for ${m#"$PROJECT"/} (see $WORK/mvn.log)"; exit 1; }
  cp="$cp:$m/target/test-classes:$m/target/classes:$(cat "$m/target/rxe-guest.cp")"
done
echo "${cp#:}" > "$OUT/classpath"
flock -u 8
# copied out of whichever local repository Maven uses (.mvn/maven.config may move it off ~/.m2)
CONSOLE_JAR=$WORK/cache/junit-platform-console-standalone-$CONSOLE_VERSION.jar
if [ ! -f "$CONSOLE_JAR" ]; then
  mvn -B -q dependency:copy -Dartifact=org.junit.platform:junit-platform-console-standalone:$CONSOLE_VERSION \
      -DoutputDirectory="$WORK/cache" >>"$WORK/mvn.log" 2>&1 \
    || skip "cannot fetch junit-platform-console-standalone $CONSOLE_VERSION (see $WORK/mvn.log)"
fi
TESTS=${RXE_TESTS:-"io.rnbd.rdma.disni.DisniRxeTest io.rnbd.rdma.disni.DisniProviderConformanceTest io.rnbd.rdma.disni.DisniHotplugTest io.rnbd.rdma.disni.DisniRnbdEndToEndTest io.rnbd.rxe.interop.LinuxRnbdTwoPathTest io.rnbd.rxe.interop.LinuxClientMapsApplianceTest io.rnbd.rxe.interop.ApplianceMapsLinuxExportTest io.rnbd.rxe.interop.LinuxNbdClientGatewayTest io.rnbd.rxe.interop.LinuxClientOpsTest io.rnbd.rxe.interop.ApplianceOpsOnLinuxTest io.rnbd.rxe.interop.ApplianceFailuresOnLinuxTest io.rnbd.rxe.interop.SlowBackendPathFailureTest io.rnbd.rxe.interop.LifecycleTest io.rnbd.rxe.interop.LinuxDmMultipathHaTest"}
CLASSES=""
[ "$TESTS" = - ] && TESTS=""   # RXE_TESTS=-: no JUnit class, only the guest hooks (bench/linux-peer-ratio.sh)
for t in $TESTS; do
  found=""
  for m in "${TEST_MODULES[@]}"; do [ -f "$m/target/test-classes/${t//.//}.class" ] && found=1; done
  [ -n "$found" ] && CLASSES="$CLASSES $t" || { echo "FAILED: no test class $t (not built?)"; PREP_FAILED="test class $t missing"; }
done
[ -n "$CLASSES" ] || [ -z "$TESTS" ] || { echo "FAILED: none of the test classes exist: $TESTS"; exit 1; }
TIMEOUT=${RXE_TIMEOUT:-1200}
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
RDMA_TEST_ADDR2=${RXE_ADDR2:-192.0.2.1}
RDMA_HOTPLUG_ADDR=${RXE_HOTPLUG_ADDR:-203.0.113.1}
RDMA_LINKDOWN_ADDR=${RXE_LINKDOWN_ADDR:-198.18.0.1}
RDMA_LINKDOWN_ADDR2=${RXE_LINKDOWN_ADDR2:-198.19.0.1}
TIMEOUT_FACTOR=${RXE_TIMEOUT_FACTOR:-20}
HOOKS=$(printf %q "$(cd "${RXE_GUEST_HOOKS:-$HERE/guest.d}" 2>/dev/null && pwd || echo "${RXE_GUEST_HOOKS}")")
JUNIT_TIMEOUT=$(( TIMEOUT - 45 ))
STALL_S=${RXE_STALL_S:-420}
GUEST_ENV=$(printf %q "${RXE_GUEST_ENV:-}")
ENV

# --- 4. boot (TCG: nested KVM does not run a stock kernel here, see rxe/README.md) ---
stamp "booting $KVER (timeout ${TIMEOUT}s)"
T0=$(date +%s)
timeout "$TIMEOUT" qemu-system-x86_64 -accel "tcg,thread=${RXE_TCG_THREAD:-single},tb-size=512" -cpu "${RXE_CPU:-max,avx=off}" \
  -smp "${SMP:-$(nproc)}" -m "${MEM:-4G}" -nographic -no-reboot -nodefaults -serial stdio \
  -kernel "$KROOT/boot/vmlinuz-$KVER" -initrd "$WORK/initramfs-$KVER.cpio.gz" \
  -append "console=ttyS0 panic=-1 quiet loglevel=${RXE_LOGLEVEL:-3} ${RXE_CMDLINE:-} guest_init=$HERE/lib/guest-init.sh rxe_out=$OUT" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$OUT,mount_tag=out,security_model=none" \
  -nic none < /dev/null 2>"$WORK/qemu$RUN.err" | sed -u 's/\r$//' | tee "$CONSOLE"
QRC=${PIPESTATUS[0]}
stamp "qemu exited rc=$QRC after $(( $(date +%s) - T0 ))s"
# CI keeps no files: what a failed guest left is printed here, on RXE: lines (the matrix keeps them)
post_mortem() {
  echo "RXE: the last test started: $(last_test "$OUT/junit.log" || true)"
  if [ -f "$OUT/oops.log" ]; then
    echo "RXE: the guest's kernel oopsed ($OUT/oops.log):"
    OOPS_LINES=45 oops_report "$OUT/oops.log" | sed 's/^/RXE:   /'
  elif grep -qE "$OOPS_RE" "$CONSOLE"; then
    echo "RXE: the guest's kernel oopsed ($CONSOLE):"
    OOPS_LINES=45 oops_report "$CONSOLE" | sed 's/^/RXE:   /'
  fi
  if [ -f "$OUT/stall.log" ]; then
    echo "RXE: the guest stalled ($OUT/stall.log; the JVM's threads are in $OUT/junit.log):"
    sed 's/^/RXE:   /' "$OUT/stall.log" | head -80
    awk '/^Full thread dump/{p=1} p' "$OUT/junit.log" | grep -E '^"|^\s+at ' | grep -B1 -A12 '^"main"' | head -40 | sed 's/^/RXE:   /'
  fi
}
if [ ! -f "$OUT/rc" ]; then
  if [ "$QRC" = 124 ]; then echo "FAILED: guest timed out after ${TIMEOUT}s"; post_mortem; exit 99; fi
  grep -q . "$WORK/qemu$RUN.err" && ! grep -q "GUEST\[" "$CONSOLE" \
    && skip "qemu could not start: $(head -1 "$WORK/qemu$RUN.err")"
  echo "FAILED: guest died without a result (see $CONSOLE)"
  post_mortem
  exit 99
fi
RC=$(cat "$OUT/rc")
# 3: guest-init.sh's watcher saw a kernel oops and ended the run (the JUnit reports of the class
# it was in are lost with the JVM)
[ "$RC" = 3 ] && { echo "FAILED: the guest's kernel oopsed"; post_mortem; }
[ "$RC" = 1 ] && [ -f "$OUT/stall.log" ] && post_mortem
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
grep -E "tests (successful|failed|aborted|skipped)" "$OUT/junit.log" 2>/dev/null | sed 's/^/RXE: /'
# one line per test class from the XML reports, then each failure and skip with its reason
# (failure: message="..."; skip: <skipped><![CDATA[reason]]>)
for x in "$OUT"/reports/TEST-*.xml; do
  [ -f "$x" ] || continue
  tr '\n' ' ' < "$x" | sed 's/<testcase /\n<testcase /g' | awk '
    function reason(s, tag) {
      if (s ~ ("<" tag "[^>]*message=\"")) { sub(".*<" tag "[^>]*message=\"", "", s); sub(/".*/, "", s) }
      else { sub(".*<" tag "[^>]*>(<!\\[CDATA\\[)?", "", s); sub(/(\]\]>)?<\/.*/, "", s) }
      return substr(s, 1, 200)
    }
    /^<testcase / {
      c = $0; sub(/.*classname="/, "", c); sub(/".*/, "", c)
      n = $0; sub(/.* name="/, "", n); sub(/".*/, "", n)
      cls[c] = 1
      if ($0 ~ /<failure[ >]/) { failed[c]++; why[c] = why[c] "\n" c ":   FAILED " n ": " reason($0, "failure") }
      else if ($0 ~ /<error[ >]/) { failed[c]++; why[c] = why[c] "\n" c ":   FAILED " n ": " reason($0, "error") }
      else if ($0 ~ /<skipped/) { skipped[c]++; why[c] = why[c] "\n" c ":   skipped " n ": " reason($0, "skipped") }
      else passed[c]++
    }
    END { for (c in cls) printf "%s: %d passed, %d failed, %d skipped%s\n", c, passed[c], failed[c], skipped[c], why[c] }' \
    | sort -s -k1,1 | sed 's/^/RXE: /'
done
# the line above keeps a failure's first 200 characters; CI keeps no files, so each failure's
# whole message (a command's output, the kernel log a test appended) is printed here too
command -v python3 >/dev/null && python3 - "$OUT"/reports/TEST-*.xml <<'PY' 2>/dev/null | sed 's/^/RXE:   | /'
import sys, xml.etree.ElementTree as ET
for x in sys.argv[1:]:
    try:
        cases = ET.parse(x).getroot().iter("testcase")
    except (OSError, ET.ParseError):
        continue
    for tc in cases:
        for tag in ("failure", "error"):
            f = tc.find(tag)
            if f is None:
                continue
            lines = (f.get("message") or f.text or "").splitlines()
            print("%s.%s, whole message (%d lines%s):" % (tc.get("classname", "").rsplit(".", 1)[-1],
                  tc.get("name", ""), len(lines), ", the first 150" if len(lines) > 150 else ""))
            for l in lines[:150]:
                print("  " + l)
PY
if [ -n "$PREP_FAILED" ]; then
  echo "RXE: FAILED before the guest ran: $PREP_FAILED"
  [ "$RC" = 0 ] && RC=1
fi
if [ "$RC" = 0 ]; then
  stamp "PASSED (reports in $OUT/reports)"
else
  stamp "FAILED rc=$RC (reports in $OUT/reports, console in $CONSOLE)"
fi
exit "$RC"
