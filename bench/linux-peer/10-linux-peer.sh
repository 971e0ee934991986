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
# Each run also gives the guest's CPU and context switches per request (/proc/stat over the fio
# run; the appliance JVMs' threads and the kernel's ksoftirqd and kworker threads from /proc; fio's
# own report): the guest's CPU per request, not a CPU left idle, is what sets IOPS here, so the
# difference between the appliance's and Linux's "busy" is what the ratio costs, split into user,
# system and softirq time, the JVMs' completion (user and system), JIT and other threads, the
# kernel threads and fio (docs/perf.md section 8, runs 27 and 28; "Where the 4 KiB difference is"
# did it by hand).
#
# A/B (BENCH_AB set to JVM options, comma-separated, e.g. -Drnbd.disni.memory.windows=off): a second appliance JVM,
# the same command with those options after the others, exports the memory backend too, and it
# takes the file export's place in the rotation and the table ("file on brd" then reads "B").
# Two JVMs side by side in one guest are how a change is judged here: two guests differ more
# than most changes do (docs/perf.md runs 8, 9, 19).
#
# Placement (BENCH_FIO_CPUS, BENCH_APP_CPUS: guest CPU lists, unset = the scheduler's choice): fio
# (fio's own cpus_allowed, every target alike) and the appliance JVMs (taskset) each kept to its
# CPUs. Client and server share the guest's two vCPUs here, where a deployment gives them a host
# each; apart, the processes no longer take turns on one vCPU (docs/perf.md section 8: a switch
# between processes is what TCG charges most for). Linux's server runs where rxe's work for the
# client runs, so it is not placed.
#
# Env (from guest.env / guest-init.sh): RDMA_TEST_ADDR, JAVA, NATIVE_DIR, OUT, PROJECT, TIMEOUT_FACTOR
#      BENCH_SECONDS (default 15) per run, BENCH_REPS (default 3), BENCH_WARMUP (default 30) per point
set -u
FIO_PIN=()
[ -n "${BENCH_FIO_CPUS:-}" ] && FIO_PIN=(--cpus_allowed="$BENCH_FIO_CPUS")
APP_PIN=()
[ -n "${BENCH_APP_CPUS:-}" ] && APP_PIN=(taskset -c "$BENCH_APP_CPUS")
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
# BENCH_JAVA_OPTS: JVM options for every appliance JVM, comma-separated (the guest's environment
# splits on spaces), before the A/B's own
IFS=, read -ra JAVA_OPTS_ALL <<< "${BENCH_JAVA_OPTS:-}"
appliance() {   # appliance PORT EXPORTS LOG [JVM option...]
  local port=$1 exports=$2 logf=$3; shift 3
  "${APP_PIN[@]}" "$JAVA" --add-exports java.base/sun.nio.ch=ALL-UNNAMED -Xms512m -Xmx512m -XX:MaxDirectMemorySize=1536m \
  -Djava.library.path="$NATIVE_DIR" -Drnbd.rdma.require=true -Drnbd.rdma.timeout.factor="$TIMEOUT_FACTOR" \
  -Dorg.slf4j.simpleLogger.defaultLogLevel="${BENCH_LOG_LEVEL:-warn}" -Dorg.slf4j.simpleLogger.showDateTime=true \
  -Drnbd.disni.completion.threads="${BENCH_CQ_THREADS:-1}" -Drnbd.disni.memory.windows="${BENCH_WINDOWS:-auto}" \
  ${BENCH_CHUNK:+-Drnbd.chunk.size="$BENCH_CHUNK"} -DalwaysInvalidate="${BENCH_ALWAYS_INVALIDATE:-true}" ${JAVA_OPTS_ALL[@]+"${JAVA_OPTS_ALL[@]}"} "$@" \
  -cp "$(cat "$OUT/classpath")" io.rnbd.rxe.interop.ApplianceServerMain "$A" "$port" 128 "$exports" \
  > "$logf" 2>&1 &
}
listening() {   # listening PID LOG
  for _ in $(seq 1 600); do
    grep -qs LISTENING "$2" && return 0
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
[ -n "${BENCH_JAVA_OPTS:-}" ] && log "every appliance JVM with ${BENCH_JAVA_OPTS}"

map() {   # map SESS PORT DEVICE -> /dev/rnbdN
  echo "dest_port=$2 sessname=$1 path=ip:$A device_path=$3 access_mode=rw" > /sys/class/rnbd-client/ctl/map_device \
    || fail "map $3 of $1"
  local link=/sys/class/rnbd-client/ctl/devices/$3@$1
  for _ in $(seq 1 100); do [ -L "$link" ] && break; sleep 0.5; done
  echo "/dev/$(basename "$(readlink "$link")")"
}
# BENCH_LINUX_FIRST=1 maps Linux's export before the appliance's (an order the bench otherwise
# fixes: the appliance's sessions first, Linux's last)
DEV_LNX=
[ "${BENCH_LINUX_FIRST:-0}" = 1 ] && DEV_LNX=$(map bench-lnx 1234 ram1)
if [ -n "$AB" ]; then
  DEV_APP=$(map bench-app-b $APP_B_PORT bench2)
  log "A/B: \"appliance\" is a second JVM with $AB, exporting the memory backend"
else
  DEV_APP=$(map bench-app $APP_PORT bench0)
fi
DEV_MEM=$(map bench-app $APP_PORT bench1)
[ -n "$DEV_LNX" ] || DEV_LNX=$(map bench-lnx 1234 ram1)
sectors() { cat "/sys/block/${1#/dev/}/size"; }
log "appliance file/brd: $DEV_APP ($(sectors "$DEV_APP") sectors), appliance memory: $DEV_MEM ($(sectors "$DEV_MEM")), linux: $DEV_LNX ($(sectors "$DEV_LNX"))"
# fill each once, so reads read data and brd and the memory backend have their pages
for d in "$DEV_APP" "$DEV_MEM" "$DEV_LNX"; do
  guarded 600 "fill $d" fio --name=fill --filename="$d" --ioengine=libaio --direct=1 --rw=write --bs=1m --iodepth=8 \
    --size=${SIZE_MIB}m --output-format=terse >/dev/null || fail "fill $d"
done

TCK=$(getconf CLK_TCK)
# Threads' CPU ticks, one awk over their stat files (a process per thread would take seconds
# under TCG): "tid kind utime stime" per line, kind being what the thread is for. The name
# in a stat file is in parentheses and may hold spaces ("C2 CompilerThre"), so the fields are
# counted after its ")". Appliance JVMs: cq (rdma-disni's completion threads), jit (the compiler
# threads), jvm (every other); the kernel's ksoftirqd/N and kworker/* (7.x runs rxe's scheduled
# tasks in a work queue, 6.1 in tasklets, which ksoftirqd runs when raised outside an interrupt).
thread_snapshot() {   # thread_snapshot FILE
  { [ -n "$APP$APP_B" ] && cat /proc/"$APP"/task/*/stat ${APP_B:+/proc/$APP_B/task/*/stat} 2>/dev/null | sed 's/^/J /'
    cat /proc/[0-9]*/stat 2>/dev/null | grep -E '^[0-9]+ \((ksoftirqd|kworker)/' | sed 's/^/K /'
  } | awk '{
      i = index($0, "("); j = 0; for (k = length($0); k > 0; k--) if (substr($0, k, 1) == ")") { j = k; break }
      name = substr($0, i + 1, j - i - 1); split(substr($0, j + 2), f, " ")
      if ($1 == "J") kind = name ~ /^rdma-disni-cq/ ? "cq" : (name ~ /^C[12] Compiler/ ? "jit" : "jvm")
      else kind = name ~ /^ksoftirqd/ ? "ksoftirqd" : "kworker"
      print $2, kind, f[12], f[13] }' > "$1"
  # the completion threads' voluntary and involuntary context switches so far
  for t in /proc/"$APP"/task/* ${APP_B:+/proc/$APP_B/task/*}; do
    [ -r "$t/status" ] && echo "${t##*/} $t/status"
  done | awk '{ f = $2; n = ""; v = 0; c = 0
      while ((getline l < f) > 0) { split(l, a, /[ \t]+/)
        if (a[1] == "Name:") n = a[2]; else if (a[1] == "voluntary_ctxt_switches:") v = a[2]
        else if (a[1] == "nonvoluntary_ctxt_switches:") c = a[2] }
      close(f); if (n ~ /^rdma-disni-cq/) print $1, "cqsw", v, c }' >> "$1"
}
# "kind user sys" summed over the threads alive in both snapshots (threads come and go)
thread_delta() {   # thread_delta FILE0 FILE1
  awk 'NR == FNR { u[$1 " " $2] = $3; y[$1 " " $2] = $4; next }
       ($1 " " $2) in u { du[$2] += $3 - u[$1 " " $2]; dy[$2] += $4 - y[$1 " " $2] }
       END { for (k in du) print k, du[k], dy[k] }' "$1" "$2"
}
# CPU seconds the appliance's JIT compiler threads have used so far
jit_cpu() {
  thread_snapshot "$OUT/jit.snap"
  awk -v t="$TCK" '$2 == "jit" { s += $3 + $4 } END { printf "%.1f", s / t }' "$OUT/jit.snap"
}
# the guest's CPU ticks so far (/proc/stat, every CPU): "uptime user system softirq busy ctxt",
# busy being all but idle and iowait, ctxt the context switches
guest_ticks() {
  echo "$(cut -d' ' -f1 /proc/uptime) $(awk '/^cpu / { c = $2 + $3 " " $4 " " $8 " " $2 + $3 + $4 + $7 + $8 + $9 }
    /^ctxt / { x = $2 } END { print c, x }' /proc/stat)"
}
# Per request over a run: the guest's CPU in microseconds (what decides IOPS in a guest whose vCPUs
# share one host thread, single-threaded TCG, where an idle vCPU costs nothing: docs/perf.md
# section 8) and context switches. Its split by thread is a machine's with RXE_TCG_THREAD=multi;
# under single-threaded TCG a vCPU that waits for the host thread still sees its clock run
# (run 28). The guest's figures are read right before and after fio (its 3 s ramp included, at
# the same load); the threads' around those; fio's CPU is fio's own report.
#   cpu_per_request IOPS FIO_CPU% "GUEST0" "GUEST1" THREAD_DELTA_FILE ->
#   "busy user system softirq  cq-user cq-system jit jvm-rest  ksoftirqd kworker fio  ctxt cq-vol cq-invol"
cpu_per_request() {
  awk -v iops="$1" -v fio="$2" -v g0="$3" -v g1="$4" -v t="$TCK" '
    { u[$1] = $2; y[$1] = $3 }
    END { split(g0, a, " "); split(g1, b, " ")   # uptime user system softirq busy ctxt
      req = iops * (b[1] - a[1]); if (req <= 0) { print "0 0 0 0 0 0 0 0 0 0 0 0 0 0"; exit }
      k = 1e6 / t / req
      printf "%.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.2f %.2f %.2f\n",
        (b[5] - a[5]) * k, (b[2] - a[2]) * k, (b[3] - a[3]) * k, (b[4] - a[4]) * k,
        u["cq"] * k, y["cq"] * k, (u["jit"] + y["jit"]) * k, (u["jvm"] + y["jvm"]) * k,
        (u["ksoftirqd"] + y["ksoftirqd"]) * k, (u["kworker"] + y["kworker"]) * k, fio / 100 * 1e6 / iops,
        (b[6] - a[6]) / req, u["cqsw"] / req, y["cqsw"] / req }' "$5"
}

# point: name rw bs iodepth
POINTS="rr4k:randread:4k:32 rw4k:randwrite:4k:32 sr128k:read:128k:32 sw128k:write:128k:32"
results=$OUT/linux-peer-runs.txt
cpu_results=$OUT/linux-peer-cpu.txt
: > "$results"; : > "$cpu_results"
run() {   # run TARGET DEV NAME RW BS QD -> "target name iops kib_s fio_cpu_percent"
  local out
  out=$(guarded $((SECS * 4 + 60)) "fio $3 on $1" fio "${FIO_PIN[@]}" --name="$3" --filename="$2" --ioengine=libaio --direct=1 --rw="$4" --bs="$5" --iodepth="$6" \
    --numjobs=1 --time_based --runtime="$SECS" --ramp_time=3 --size=${SIZE_MIB}m --group_reporting \
    --output-format=json 2>&1) || { fail "fio $3 on $1: $out" >&2; return 1; }
  echo "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)["jobs"][0]
side = "read" if j["job options"]["rw"].endswith("read") else "write"
if j["error"]: raise SystemExit("fio error %d" % j["error"])
print("%s %s %.0f %.0f %.2f" % (sys.argv[1], sys.argv[2], j[side]["iops"], j[side]["bw"], j["usr_cpu"] + j["sys_cpu"]))' "$1" "$3"
}
warm() {   # warm DEV NAME RW BS QD: an unmeasured run on the appliance
  guarded $((WARMUP * 4 + 60)) "warm-up $2 on $1" fio "${FIO_PIN[@]}" --name="$2" --filename="$1" --ioengine=libaio --direct=1 \
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
      thread_snapshot "$OUT/threads0"; g0=$(guest_ticks)
      out=$(run "$t" "$d" "$name" "$rw" "$bs" "$qd") || exit 1
      g1=$(guest_ticks); thread_snapshot "$OUT/threads1"; thread_delta "$OUT/threads0" "$OUT/threads1" > "$OUT/threads.delta"
      line=$(echo "$out" | cut -d' ' -f1-4)
      cpu=$(cpu_per_request "$(echo "$out" | cut -d' ' -f3)" "$(echo "$out" | cut -d' ' -f5)" "$g0" "$g1" "$OUT/threads.delta")
      jit=$(awk -v t="$TCK" '$1 == "jit" { s = $2 + $3 } END { printf "%.1f", s / t }' "$OUT/threads.delta")
      log "rep $rep: $line jit=${jit}s per request: $cpu"
      echo "$line" >> "$results"
      echo "$t $name $cpu" >> "$cpu_results"
    done
  done
done
rxe_counters
for d in "$DEV_APP" "$DEV_MEM" "$DEV_LNX"; do echo normal > "/sys/block/${d#/dev/}/rnbd/unmap_device"; done

python3 - "$results" "$SECS" "$REPS" "$WARMUP" "$AB" "$cpu_results" > "$OUT/linux-peer.md" <<'PY'
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
print()
# where the guest's CPU went per request: with single-threaded TCG the guest's CPU per request is
# what sets IOPS, so the difference between two targets' "busy" is the ratio's cost, split
cpu = {}
for l in open(sys.argv[6]):
    t, name, *v = l.split()
    cpu.setdefault((name, t), []).append([float(x) for x in v])
print("Guest CPU per request, µs, and context switches per request, medians (/proc over each fio run;"
      " busy = all but idle and iowait, of both vCPUs; the JVM columns are the appliance JVMs' threads,"
      " idle beside Linux's runs; ksoftirqd and kworker are the kernel threads, fio its own report):")
print()
print("| point | target | busy | user | system | softirq | JVMs: completion threads, user | system | JIT"
      " | other threads | ksoftirqd | kworkers | fio | switches | completion threads: voluntary | involuntary |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
names = {"appliance-mem": "appliance, memory", "appliance": "B, memory" if sys.argv[5] else "appliance, file on brd",
         "linux": "Linux rnbd-server"}
for name in ("rr4k", "rw4k", "sr128k", "sw128k"):
    for t in ("appliance-mem", "appliance", "linux"):
        rows = cpu.get((name, t))
        if rows:
            print("| %s | %s | %s |" % (name, names[t], " | ".join(
                ("%.0f" if i < 11 else "%.2f") % statistics.median(r[i] for r in rows) for i in range(14))))
PY
cat "$OUT/linux-peer.md"
