#!/bin/bash
# Guest hook of bench/linux-peer-ratio.sh (runs inside the rxe guest, after rxe/lib/guest-init.sh
# set up rxe0/rxe1): Linux's own rnbd-client drives fio against two servers over the same rxe0,
# each exporting RAM of the same size:
#   appliance   ApplianceServerMain (the appliance's RTRS + RNBD servers, queue depth 128,
#               always_invalidate on) in a JVM of its own, with two exports: bench0, the file
#               backend on the brd disk /dev/ram0, and bench1, the shipped memory backend (what
#               the default profile exports). brd answers inside submit_bio, as the memory
#               backend answers on the thread that asked; the file backend hands each request to
#               one of its IO threads for pread/pwrite, a thread switch Linux's server on brd
#               does not make, so the two rows tell the transport from that hop.
#   linux       Linux's rnbd-server (rtrs-server always_invalidate=Y) exporting /dev/ram1
# and rotates the three, point by point, REPS times. Prints one line per run and a table of
# medians with appliance/linux ratios; the table also goes to $OUT/linux-peer.md.
#
# The appliance is warmed up first (BENCH_WARMUP seconds of each point on each of its exports,
# not measured): under TCG its JIT compiler is itself emulated and was still compiling (a fifth
# of the guest's CPU, the C2 thread) a minute into the load, so without it the first repetitions
# measure compilation. Each run's line gives the CPU seconds its compiler threads took meanwhile
# (jit=), so a table can be seen to be the steady state.
#
# A/B (BENCH_AB set to JVM options, comma-separated, e.g. -Drnbd.disni.memory.windows=off): a second appliance JVM,
# the same command with those options after the others, exports the memory backend too, and it
# takes the file export's place in the rotation and the table ("file on brd" then reads "B").
# Two JVMs side by side in one guest are how a change is judged here: two guests differ more
# than most changes do (docs/perf.md runs 8, 9, 19).
#
# Env (from guest.env / guest-init.sh): RDMA_TEST_ADDR, JAVA, NATIVE_DIR, OUT, PROJECT, TIMEOUT_FACTOR
#      BENCH_SECONDS (default 15) per run, BENCH_REPS (default 3), BENCH_WARMUP (default 30) per point
set -u
SECS=${BENCH_SECONDS:-15}
REPS=${BENCH_REPS:-3}
WARMUP=${BENCH_WARMUP:-30}
A=$RDMA_TEST_ADDR
APP_PORT=1241
SIZE_MIB=256   # with 512 MiB each, Linux's server failed the second fill with EIO 256 MiB in (the guest has 4 GiB: two brd disks, the appliance's page cache over one, two JVMs; likely memory)
log() { echo "BENCH[$(cut -d' ' -f1 /proc/uptime)] $*"; }
# rxe's non-zero counters (RNR NAKs, retries, sequence errors): a retry is what replays binds
rxe_counters() {
  local f out=""
  for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
    [ "$(cat "$f")" != 0 ] && out="$out $(basename "$f")=$(cat "$f")"
  done
  log "rxe0 counters:$out"
}
fail() { log "FAILED: $*"; dmesg > "$OUT/linux-peer-dmesg.txt"; rxe_counters; dmesg | grep -iE 'rtrs|rnbd|brd|error' | grep -v LOCAL_INV | tail -30; exit 1; }
# a fio that outlives its time by far is a hang (run 16e sat 18 min with nothing logged): keep what
# shows where it stopped (the appliance's threads, the guest's blocked tasks, rtrs-client's
# counters), then fail instead of waiting for the run's overall timeout
guarded() {   # guarded SECONDS WHAT cmd...: run cmd, fail with WHAT if it takes longer
  local limit=$1 what=$2; shift 2
  "$@" & local pid=$! n=0
  while kill -0 $pid 2>/dev/null; do
    sleep 1; n=$((n + 1))
    [ $n -lt "$limit" ] && continue
    log "HUNG: $what after ${n} s; diagnostics in $OUT/linux-peer-hang.txt" >&2
    { echo "== appliance threads"; "$(dirname "$JAVA")/jstack" "$APP" 2>&1
      echo "== rtrs-client counters"
      for f in /sys/class/rtrs-client/*/paths/*/stats/* /sys/class/rtrs-client/*/paths/*/state; do
        echo "$f: $(cat "$f" 2>&1 | tr '\n' ' ')"; done
      echo "== blocked tasks"; echo w > /proc/sysrq-trigger; sleep 1; dmesg | tail -200
    } > "$OUT/linux-peer-hang.txt" 2>&1
    kill -9 $pid 2>/dev/null
    fail "$what hung"
  done
  wait $pid
}

modprobe brd rd_nr=2 rd_size=$((SIZE_MIB * 1024)) || fail "modprobe brd"
# Linux's server on ram1
modprobe rtrs-server always_invalidate=Y && modprobe rnbd-server port_nr=1234 dev_search_path=/dev \
  || fail "Linux's rnbd-server"
modprobe rnbd-client || fail "rnbd-client"

# the appliance on ram0, in its own JVM (the classpath the JUnit run uses)
appliance() {   # appliance PORT EXPORTS LOG [JVM option...]
  local port=$1 exports=$2 logf=$3; shift 3
  "$JAVA" --add-exports java.base/sun.nio.ch=ALL-UNNAMED -Xms512m -Xmx512m -XX:MaxDirectMemorySize=1536m \
  -Djava.library.path="$NATIVE_DIR" -Drnbd.rdma.require=true -Drnbd.rdma.timeout.factor="$TIMEOUT_FACTOR" \
  -Dorg.slf4j.simpleLogger.defaultLogLevel="${BENCH_LOG_LEVEL:-warn}" -Dorg.slf4j.simpleLogger.showDateTime=true \
  -Drnbd.disni.completion.threads="${BENCH_CQ_THREADS:-1}" -Drnbd.disni.memory.windows="${BENCH_WINDOWS:-auto}" \
  ${BENCH_CHUNK:+-Drnbd.chunk.size="$BENCH_CHUNK"} -DalwaysInvalidate="${BENCH_ALWAYS_INVALIDATE:-true}" "$@" \
  -cp "$(cat "$OUT/classpath")" io.rnbd.rxe.interop.ApplianceServerMain "$A" "$port" 128 "$exports" \
  > "$logf" 2>&1 &
}
listening() {   # listening PID LOG
  for _ in $(seq 1 600); do
    grep -q LISTENING "$2" && return 0
    kill -0 "$1" 2>/dev/null || fail "the appliance exited: $(tail -5 "$2")"
    sleep 1
  done
  fail "the appliance did not listen ($2)"
}
AB=${BENCH_AB:-}
APP_B=
if [ -n "$AB" ]; then
  APP_B_PORT=1242
  IFS=, read -ra ab_opts <<< "$AB"   # comma-separated: the guest's environment splits on spaces
  appliance $APP_B_PORT bench2=memory:$((SIZE_MIB * 1048576)) "$OUT/linux-peer-appliance-b.log" "${ab_opts[@]}"
  APP_B=$!
  appliance $APP_PORT bench1=memory:$((SIZE_MIB * 1048576)) "$OUT/linux-peer-appliance.log"
else
  appliance $APP_PORT bench0=/dev/ram0,bench1=memory:$((SIZE_MIB * 1048576)) "$OUT/linux-peer-appliance.log"
fi
APP=$!
trap 'kill $APP $APP_B 2>/dev/null; wait $APP $APP_B 2>/dev/null' EXIT
listening $APP "$OUT/linux-peer-appliance.log"
[ -n "$APP_B" ] && listening "$APP_B" "$OUT/linux-peer-appliance-b.log"

map() {   # map SESS PORT DEVICE -> /dev/rnbdN
  echo "dest_port=$2 sessname=$1 path=ip:$A device_path=$3 access_mode=rw" > /sys/class/rnbd-client/ctl/map_device \
    || fail "map $3 of $1"
  local link=/sys/class/rnbd-client/ctl/devices/$3@$1
  for _ in $(seq 1 100); do [ -L "$link" ] && break; sleep 0.5; done
  echo "/dev/$(basename "$(readlink "$link")")"
}
if [ -n "$AB" ]; then
  DEV_APP=$(map bench-app-b $APP_B_PORT bench2)
  log "A/B: \"appliance\" is a second JVM with $AB, exporting the memory backend"
else
  DEV_APP=$(map bench-app $APP_PORT bench0)
fi
DEV_MEM=$(map bench-app $APP_PORT bench1)
DEV_LNX=$(map bench-lnx 1234 ram1)
sectors() { cat "/sys/block/${1#/dev/}/size"; }
log "appliance file/brd: $DEV_APP ($(sectors "$DEV_APP") sectors), appliance memory: $DEV_MEM ($(sectors "$DEV_MEM")), linux: $DEV_LNX ($(sectors "$DEV_LNX"))"
# fill each once, so reads read data and brd and the memory backend have their pages
for d in "$DEV_APP" "$DEV_MEM" "$DEV_LNX"; do
  guarded 600 "fill $d" fio --name=fill --filename="$d" --ioengine=libaio --direct=1 --rw=write --bs=1m --iodepth=8 \
    --size=${SIZE_MIB}m --output-format=terse >/dev/null || fail "fill $d"
done

# CPU seconds the appliance's JIT compiler threads have used so far (utime + stime of each)
jit_cpu() {
  local t sum=0 tck
  tck=$(getconf CLK_TCK)
  for t in /proc/"$APP"/task/* ${APP_B:+/proc/$APP_B/task/*}; do
    case $(cat "$t/comm" 2>/dev/null) in
      C1\ Compiler*|C2\ Compiler*) sum=$((sum + $(awk '{print $14 + $15}' "$t/stat"))) ;;
    esac
  done
  awk -v s="$sum" -v t="$tck" 'BEGIN {printf "%.1f", s / t}'
}

# point: name rw bs iodepth
POINTS="rr4k:randread:4k:32 rw4k:randwrite:4k:32 sr128k:read:128k:32 sw128k:write:128k:32"
results=$OUT/linux-peer-runs.txt
: > "$results"
run() {   # run TARGET DEV NAME RW BS QD -> "target name iops kib_s"
  local out
  out=$(guarded $((SECS * 4 + 60)) "fio $3 on $1" fio --name="$3" --filename="$2" --ioengine=libaio --direct=1 --rw="$4" --bs="$5" --iodepth="$6" \
    --numjobs=1 --time_based --runtime="$SECS" --ramp_time=3 --size=${SIZE_MIB}m --group_reporting \
    --output-format=json 2>&1) || { fail "fio $3 on $1: $out" >&2; return 1; }
  echo "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
side = "read" if j["job options"]["rw"].endswith("read") else "write"
if j["error"]: raise SystemExit("fio error %d" % j["error"])
print("%s %s %.0f %.0f" % (sys.argv[1], sys.argv[2], j[side]["iops"], j[side]["bw"]))' "$1" "$3"
}
warm() {   # warm DEV NAME RW BS QD: an unmeasured run on the appliance
  guarded $((WARMUP * 4 + 60)) "warm-up $2 on $1" fio --name="$2" --filename="$1" --ioengine=libaio --direct=1 \
    --rw="$3" --bs="$4" --iodepth="$5" --time_based --runtime="$WARMUP" --size=${SIZE_MIB}m --output-format=terse >/dev/null || fail "warm-up $2 on $1"
}
if [ "$WARMUP" -gt 0 ]; then
  j0=$(jit_cpu)
  for p in $POINTS; do
    IFS=: read -r name rw bs qd <<< "$p"
    warm "$DEV_MEM" "$name" "$rw" "$bs" "$qd"
    warm "$DEV_APP" "$name" "$rw" "$bs" "$qd"
  done
  log "warm-up: ${WARMUP} s per point and export, the JIT took $(awk -v a="$j0" -v b="$(jit_cpu)" 'BEGIN {print b - a}') CPU s"
fi
for rep in $(seq 1 "$REPS"); do
  for p in $POINTS; do
    IFS=: read -r name rw bs qd <<< "$p"
    # rotate which goes first, so none always runs on the warmer machine
    case $((rep % 3)) in
      1) order="appliance appliance-mem linux" ;;
      2) order="linux appliance appliance-mem" ;;
      *) order="appliance-mem linux appliance" ;;
    esac
    for t in $order; do
      case $t in appliance) d=$DEV_APP ;; appliance-mem) d=$DEV_MEM ;; *) d=$DEV_LNX ;; esac
      j0=$(jit_cpu)
      line=$(run "$t" "$d" "$name" "$rw" "$bs" "$qd") || exit 1
      log "rep $rep: $line jit=$(awk -v a="$j0" -v b="$(jit_cpu)" 'BEGIN {print b - a}')s"
      echo "$line" >> "$results"
    done
  done
done
rxe_counters
for d in "$DEV_APP" "$DEV_MEM" "$DEV_LNX"; do echo normal > "/sys/block/${d#/dev/}/rnbd/unmap_device"; done

python3 - "$results" "$SECS" "$REPS" "$WARMUP" "$AB" > "$OUT/linux-peer.md" <<'PY'
import statistics, sys
runs = {}
for l in open(sys.argv[1]):
    t, name, iops, bw = l.split()
    runs.setdefault((name, t), []).append((float(iops), float(bw)))
if sys.argv[5]:
    print("B: a second appliance JVM with %s, memory backend" % sys.argv[5])
    print()
    print("| point | appliance, memory backend | B, memory backend | Linux rnbd-server on brd | memory / Linux | B / Linux |")
else:
    print("| point | appliance, memory backend | appliance, file backend on brd | Linux rnbd-server on brd | memory / Linux | file on brd / Linux |")
print("|---|---|---|---|---|---|")
for name, label, key, unit in [("rr4k", "4 KiB random read, QD32", 0, "IOPS"),
                               ("rw4k", "4 KiB random write, QD32", 0, "IOPS"),
                               ("sr128k", "128 KiB read, QD32", 1, "MiB/s"),
                               ("sw128k", "128 KiB write, QD32", 1, "MiB/s")]:
    m = statistics.median(v[key] for v in runs[(name, "appliance-mem")])
    a = statistics.median(v[key] for v in runs[(name, "appliance")])
    b = statistics.median(v[key] for v in runs[(name, "linux")])
    f = (lambda x: "%.0f %s" % (x, unit)) if key == 0 else (lambda x: "%.1f %s" % (x / 1024, unit))
    print("| %s | %s | %s | %s | **%.2f** | **%.2f** |" % (label, f(m), f(a), f(b), m / b, a / b))
print()
# each repetition's own ratios: the three targets of one repetition ran minutes apart, so these pair
# better than the medians when the guest drifts
second = "B" if sys.argv[5] else "file"
for name, key in [("rr4k", 0), ("rw4k", 0), ("sr128k", 1), ("sw128k", 1)]:
    m, a, b = (runs[(name, t)] for t in ("appliance-mem", "appliance", "linux"))
    print("- %s, each repetition: memory / Linux %s; %s / Linux %s; %s / memory %s" % (
        name, ", ".join("%.2f" % (x[key] / y[key]) for x, y in zip(m, b)),
        second, ", ".join("%.2f" % (x[key] / y[key]) for x, y in zip(a, b)),
        second, ", ".join("%.2f" % (x[key] / y[key]) for x, y in zip(a, m))))
print()
print("medians of %s runs of %s s each per point and target, rotated, after a warm-up of %s s per point on each appliance export" % (sys.argv[3], sys.argv[2], sys.argv[4]))
PY
cat "$OUT/linux-peer.md"
