#!/bin/bash
# One fair number against a peer nobody here wrote (issue 35): in the rxe guest, Linux's own
# rnbd-client drives fio against the appliance's RNBD server and against Linux's in-kernel
# rnbd-server, over the same rxe0, each exporting a brd RAM disk of the same size, the points
# alternated in the same run (bench/linux-peer/10-linux-peer.sh is the guest side). TCG makes
# absolute numbers meaningless; the ratio appliance / Linux is the figure (target >= 0.8).
#
#   mvn -B -q install -DskipTests -pl bundles/rdma-disni,rxe/interop -am    # first, from the root
#   bench/linux-peer-ratio.sh                 # ~23 min; RXE_KERNEL=newest for 7.x
#
# Env: BENCH_SECONDS (15) per run, BENCH_REPS (3), BENCH_WARMUP (30) unmeasured seconds per point on
# each appliance export before the first run (its JIT compiles under emulation for minutes);
# BENCH_CQ_THREADS (1) the appliance's completion threads per device (rdma-disni's completion.threads);
# BENCH_WINDOWS (auto) rdma-disni's memory.windows (auto re-registers on rxe: its README says why);
# BENCH_CHUNK (unset: the appliance's default, 256 KiB) the appliance server's chunk size in bytes
# (Linux's is 131072; under re-registration each request pins and unpins one chunk);
# BENCH_ALWAYS_INVALIDATE (true) the appliance server's always_invalidate (false: the bound no scheme
# of invalidation can pass; Linux's server keeps always_invalidate=Y, the fair comparison);
# BENCH_JAVA_OPTS (unset) JVM options, comma-separated, no spaces, for every appliance JVM (e.g.
# -XX:+UseSerialGC: the guest's 2 vCPUs and 4 GiB make the JVM choose G1);
# BENCH_AB (unset) JVM options, comma-separated, no spaces, for a second appliance JVM beside the first, exporting the memory
# backend in the file export's place (an A/B in one guest, e.g. -Drnbd.disni.memory.windows=off); the
# second JVM came out about 15 % slower at 4 KiB with the same code (docs/perf.md runs 30 and 31), so
# run an A/B twice, the roles swapped, and take the geometric mean of the pairs;
# BENCH_FIO_CPUS, BENCH_APP_CPUS (unset) guest CPU lists for fio (every target) and the appliance JVMs
# (e.g. 1 and 0: each process on a vCPU of its own, as client and server on two hosts);
# BENCH_LINUX_FIRST (0) 1 maps Linux's export first, before the appliance's (whose sessions come
# first otherwise);
# BENCH_LOG_LEVEL (warn) the appliance's log level (info names a failed completion's status);
# RXE_WORK, RXE_KERNEL, RXE_TCG_THREAD (single; multi runs the guest's two vCPUs on two host threads,
# in parallel as on hardware: docs/perf.md run 16) as for rxe/run-rxe-tests.sh.
# Prints the host's load before and after (the figures mean something only on a quiet machine)
# and the table of medians with the guest's CPU per request of each target; both are kept in
# RXE_WORK/out-linux-peer/linux-peer.md (each run's line in RXE_WORK/linux-peer.log).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
PROJECT=$(dirname "$HERE")
export RXE_WORK=${RXE_WORK:-${TMPDIR:-/tmp}/rnbd-rxe}
mkdir -p "$RXE_WORK" || exit 1
echo "host load before: $(cat /proc/loadavg) ($(nproc) CPUs)"
# into the guest hook's environment (RXE_GUEST_ENV, rxe/run-rxe-tests.sh)
export RXE_GUEST_ENV="BENCH_SECONDS=${BENCH_SECONDS:-15} BENCH_REPS=${BENCH_REPS:-3} BENCH_WARMUP=${BENCH_WARMUP:-30} BENCH_LOG_LEVEL=${BENCH_LOG_LEVEL:-warn} BENCH_CQ_THREADS=${BENCH_CQ_THREADS:-1} BENCH_WINDOWS=${BENCH_WINDOWS:-auto} BENCH_CHUNK=${BENCH_CHUNK:-} BENCH_ALWAYS_INVALIDATE=${BENCH_ALWAYS_INVALIDATE:-true} BENCH_AB=${BENCH_AB:-} BENCH_FIO_CPUS=${BENCH_FIO_CPUS:-} BENCH_APP_CPUS=${BENCH_APP_CPUS:-} BENCH_LINUX_FIRST=${BENCH_LINUX_FIRST:-0} BENCH_JAVA_OPTS=${BENCH_JAVA_OPTS:-}"
RXE_TESTS=- RXE_RUN=linux-peer RXE_GUEST_HOOKS="$HERE/linux-peer" RXE_TIMEOUT=${RXE_TIMEOUT:-1800} \
  bash "$PROJECT/rxe/run-rxe-tests.sh" > "$RXE_WORK/linux-peer.log" 2>&1
rc=$?
echo "host load after:  $(cat /proc/loadavg)"
grep -E '^BENCH\[' "$RXE_WORK/linux-peer.log"
if [ $rc != 0 ] || [ ! -s "$RXE_WORK/out-linux-peer/linux-peer.md" ]; then
  # rc 77 is run-rxe-tests.sh's "cannot run here" (no rdma-core headers, no qemu, ...): say why
  [ $rc = 77 ] && grep -E '^(skipped|libdisni): ' "$RXE_WORK/linux-peer.log" | sed 's/^/  /'
  echo "FAILED rc=$rc (log $RXE_WORK/linux-peer.log)"
  exit 1
fi
cat "$RXE_WORK/out-linux-peer/linux-peer.md"
