#!/usr/bin/env bash
# Issue #8: RNBD (over RTRS over rdma-soft, memory backend) against nbdkit's memory plugin on
# loopback, in one run, printing one table with ratios against the targets.
#
#   primary:   the rnbd load generator (bundles/loadgen, run outside Karaf by
#              io.rnbd.bench.PeerBenchMain) drives, alternately per point and repetition,
#              (a) a mapped RNBD device (RNBD server + client, RTRS server + client, two soft
#                  devices 127.0.0.1/127.0.0.2, memory backend: all in ONE JVM) and
#              (b) `nbdkit memory` over TCP through the NBD client (bundles/nbd-client).
#   gateway:   fio's nbd engine on both sides, the same eight points, CPU per IO of every process
#              (issue 22), nbd-gateway serving the same RNBD stack in a second JVM:
#              comparison 1, deployment-shaped: fio -> gateway's Unix socket -> RTRS over soft RDMA
#                 -> memory export, against fio -> nbdkit over TCP. In the default profile
#                 (GW_TOPOLOGY=profile) both ends of each path are on one soft device, so RTRS
#                 crosses the device's loopback (a Unix socket, as rxe loops back a packet for its
#                 own address): the appliance as one host serves and maps itself.
#                 GW_TOPOLOGY=split puts the path between two devices, over TCP, the shape of
#                 two hosts: there the one network hop is TCP on both sides;
#              comparison 2, same transport: fio -> gateway over TCP against fio -> nbdkit over TCP.
#              Writes gateway.png (ratio per point, target lines) with gnuplot when installed.
#   baseline:  loopback TCP bandwidth (one blocking Java stream, 128 KiB writes).
#   profile:   JFR execution samples of the RNBD target at 4 KiB depth 32, top frames.
#
# Installs nothing. Needs: java 17, nbdkit, fio, python3, taskset, jfr (JDK), gnuplot for the
# chart (optional: apt-get install gnuplot-nox), and the built
# bench jar (cd /work/main && mvn -B -q -o install -DskipTests -pl bench).
#
# Environment knobs:
#   CPUS=0-1      CPU list every process runs on (taskset -c); default: all CPUs (= unpinned,
#                 but recorded). CPUS=0 puts both sides on one CPU, as BENCHMARKING.md discusses.
#                 CPUS=none runs without taskset at all (on some hosts even an all-CPU taskset
#                 changed depth-1 wakeup latency; compare the two).
#   REPS=3        repetitions per point (medians are reported)
#   SECONDS_PER_POINT=3
#   FIO_REPS=2    repetitions per fio point
#   SIZE=256m     device size (both targets; written once before measuring)
#   PROFILE=1     0 skips the JFR profile
#
#   Every run measures the appliance's default profile unless one of the settings below is given;
#   each figure is printed with the settings it ran with that are not the default ("default" when
#   none: SETTINGS lines of the Java side, which reads the defaults from the code that ships them).
#   SERVER_POLL_USEC=  poll.usec of the RNBD server's soft device in the primary comparison (unset:
#                 the device default, an adaptive window of up to 50 us; 0 = never poll)
#   POLL_USEC=    the same for the RNBD client's soft device, and for both devices of the gateway
#                 JVM's profile topology
#   BATCH=4       the load generator's submission batch for both targets (LoadSpec.batch, fio's
#                 iodepth_batch_submit): ready IOs, up to this many, go out under one plug;
#                 1 = each alone (the generator before session 5)
#   OUT=dir       where logs, raw results and the JFR file go (default: a new /tmp/rnbd-peers.*)
#   GW_TOPOLOGY=profile  the gateway JVM's RNBD stack: "profile" is the appliance's default profile
#                 (soft0 and soft1, one path each, both ends of a path on its device, so over its
#                 loopback, min-inflight;
#                 both devices poll as POLL_USEC says), "split" the primary comparison's (a server
#                 device and a client device, one path)
#   GW_POLL_USEC= nbd-gateway's poll.usec (unset: the gateway's default, an adaptive window of up to
#                 100 us for a connection's reader to poll its socket for the next request; 0 = never)
#   UNIX_WMEM=keep  net.core.wmem_default during the gateway comparisons (keep: the host's, as a
#                 user's appliance has it): the send buffer every new Unix socket gets, fio's
#                 included. TCP sizes its send buffer itself (up to tcp_wmem's 4 MiB), so fio's
#                 writes to nbdkit never wait for room; a Unix socket keeps this default (the
#                 kernel's is 212992 bytes, less than two 128 KiB requests), and fio sleeps for room
#                 in the middle of each 128 KiB write. README, "Host tuning" says to raise it to
#                 4194304 and the gateway logs so; a byte count here raises it for the gateway
#                 comparisons when the script may (as root), prints it beside those figures, and
#                 puts the host's value back at the end
#   PRIMARY=1     0 skips the primary (load generator) comparison, for a quick gateway-only run
#   CHART=path    also copy the gateway chart there (e.g. docs/perf-gateway.png)
#   SPLIT=1       after the gateway comparisons, where the gateway JVM's CPU per IO goes at
#                 SPLIT_POINTS (default "write:128k:8 randread:4k:32 randread:4k:1", fio over the
#                 Unix socket): perf record -g of the JVM, Java named through its perf map, each
#                 sample put down to the soft transport's TCP socket work, the gateway's Unix
#                 socket, sleeping/waking, or the appliance's own code (bench/cpu_split.py); needs
#                 perf (linux-perf) and jcmd; 0 skips it
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
jar=${JAR:-$here/target/benchmarks.jar}
ncpu=$(nproc)
CPUS=${CPUS:-0-$((ncpu - 1))}
REPS=${REPS:-3}
SECS=${SECONDS_PER_POINT:-3}
FIO_REPS=${FIO_REPS:-2}
SIZE=${SIZE:-256m}
PROFILE=${PROFILE:-1}
PRIMARY=${PRIMARY:-1}
SPLIT=${SPLIT:-1}
SPLIT_POINTS=${SPLIT_POINTS:-write:128k:8 randread:4k:32 randread:4k:1}
UNIX_WMEM=${UNIX_WMEM:-keep}
if [[ $UNIX_WMEM != keep && ! $UNIX_WMEM =~ ^[1-9][0-9]*$ ]]; then
    echo "UNIX_WMEM must be a byte count or 'keep', not '$UNIX_WMEM'" >&2
    exit 1
fi
POINTS="randread:4k:1,randread:4k:32,randread:4k:128,randwrite:4k:1,randwrite:4k:32,randwrite:4k:128,read:128k:8,write:128k:8"

# The table, from a run's raw results in $OUT ("compare-peers.sh --report DIR" re-prints an old run).
report() {
echo; echo "== results (medians; ratio = RNBD / nbdkit)"
grep -s '^RESULT' "$OUT/primary.txt" | sed 's/^RESULT //' >"$OUT/primary.jsonl" || true
grep -s '^RESULT' "$OUT/tcp.txt" | sed 's/^RESULT //' >"$OUT/tcp.jsonl" || true
python3 - "$OUT" <<'EOF' | tee "$OUT/table.txt"
import json, statistics, sys, collections, os
out = sys.argv[1]
def load(f):
    return [json.loads(l) for l in open(f) if l.strip()] if os.path.exists(f) else []
def med(rows):
    by = collections.defaultdict(list)
    for r in rows:
        by[(r["target"], r["point"])].append(r)
    return {k: {f: statistics.median(x[f] for x in v) for f in v[0] if isinstance(v[0][f], (int, float))} | {"n": len(v)}
            for k, v in by.items()}
S = dict(l.rstrip("\n").split(": ", 1) for l in open(f"{out}/settings.txt") if ": " in l) \
    if os.path.exists(f"{out}/settings.txt") else {}
T = load(f"{out}/tcp.jsonl")
tcp = statistics.median(r["mibPerSecond"] for r in T) if T else float("nan")
P, F = med(load(f"{out}/primary.jsonl")), med(load(f"{out}/fio.jsonl"))
points = list(dict.fromkeys([p for _, p in P] + [p for _, p in F]))
def table(title, M, a, b, cpu, settings="not recorded (a run before issue 36)"):
    print(f"\n{title}")
    print(f"  A = {a}, B = {b}")
    print(f"  A's settings beyond the default profile: {settings} (also the last column)")
    hdr = f"{'point':<17}{'A IOPS':>10}{'B IOPS':>10}{'ratio':>7}{'A MiB/s':>9}{'B MiB/s':>9}{'A mean us':>11}{'B mean us':>11}{'lat ratio':>10}"
    if cpu:
        hdr += f"{'A CPU us/IO':>13}{'B CPU us/IO':>13}"
    if cpu == "split":
        hdr += f"{'A srv+fio':>17}{'B srv+fio':>17}{'others %CPU':>13}"
    hdr += "  settings"
    print(hdr)
    rows = []
    for p in points:
        x, y = M.get((a, p)), M.get((b, p))
        if not x or not y:
            continue
        line = (f"{p:<17}{x['iops']:>10.0f}{y['iops']:>10.0f}{x['iops']/y['iops']:>7.2f}{x['mibPerSecond']:>9.1f}"
                f"{y['mibPerSecond']:>9.1f}{x['meanUs']:>11.1f}{y['meanUs']:>11.1f}{x['meanUs']/y['meanUs']:>10.2f}")
        if cpu:
            line += f"{x['cpuUsPerIo']:>13.2f}{y['cpuUsPerIo']:>13.2f}"
        if cpu == "split":
            line += (f"{x['serverCpuUsPerIo']:>10.1f}+{x['fioCpuUsPerIo']:<6.1f}{y['serverCpuUsPerIo']:>10.1f}+"
                     f"{y['fioCpuUsPerIo']:<6.1f}{max(x['otherCpuPct'], y['otherCpuPct']):>13.0f}")
        line += f"  {settings}"
        print(line)
        rows.append((p, x['iops'] / y['iops'], x['meanUs'] / y['meanUs']))
    return rows
def check(name, val, ok, fmt):
    print(f"  {'MET   ' if ok else 'MISSED'} {name}: {fmt.format(val)}")
if P:
    print(f"loopback TCP bandwidth (median): {tcp:.0f} MiB/s")
    table(f"primary: rnbd load generator, {next(iter(P.values()))['n']} runs/point (CPU = whole JVM [+ nbdkit])", P, "rnbd", "nbdkit", True,
          *([S["primary"]] if "primary" in S else []))
    print("\ntargets (primary):")
    for rw in ("randread", "randwrite"):
        p = f"{rw}:4k:32"
        r = P[("rnbd", p)]["iops"] / P[("nbdkit", p)]["iops"]
        check(f"{p} IOPS >= 1.2x nbdkit", r, r >= 1.2, "{:.2f}x")
    for rw in ("read", "write"):
        p = f"{rw}:128k:8"
        r = P[("rnbd", p)]["mibPerSecond"] / tcp
        check(f"{p} bandwidth >= 80% of loopback TCP ({tcp:.0f} MiB/s)", r, r >= 0.8, "{:.0%}")
    for rw in ("randread", "randwrite"):
        p = f"{rw}:4k:1"
        r = P[("rnbd", p)]["meanUs"] / P[("nbdkit", p)]["meanUs"]
        check(f"{p} mean latency <= 1.5x nbdkit", r, r <= 1.5, "{:.2f}x")
if F:
    n = next(iter(F.values()))["n"]
    split = "split" if "serverCpuUsPerIo" in next(iter(F.values())) else False
    note = (" (CPU us/IO = serving process + fio; others = all other processes during the pair's runs, % of one CPU,"
            " the larger of the two)") if split else ""
    unix = any(t == "gateway-unix" for t, _ in F)
    wmem = [l.strip() for l in open(f"{out}/machine.txt") if l.startswith("net.core.wmem_default")] \
        if os.path.exists(f"{out}/machine.txt") else []
    if unix and wmem:
        print(f"\n{wmem[0]}")
    gs = [S["gateway"]] if "gateway" in S else []
    charts = []
    if unix:
        c1 = table(f"comparison 1, deployment-shaped: fio -> gateway Unix socket vs fio -> nbdkit TCP, {n} runs/point{note}",
                   F, "gateway-unix", "nbdkit", split, *gs)
        print("\ntargets (comparison 1):")
        for p, r, lat in c1:
            check(f"{p} IOPS >= 1.0x nbdkit", r, r >= 1.0, "{:.2f}x")
            if p.endswith(":1"):
                check(f"{p} mean latency <= 1.2x nbdkit", lat, lat <= 1.2, "{:.2f}x")
        charts.append(("1: gateway Unix socket / nbdkit TCP", 1.0, c1))
    c2 = table(f"{'comparison 2, same transport' if unix else 'secondary'}: fio -> gateway TCP vs fio -> nbdkit TCP, "
               f"{n} runs/point{note}", F, "gateway", "nbdkit", split, *gs)
    if unix:
        print("\ntargets (comparison 2):")
        for p, r, _ in c2:
            check(f"{p} IOPS >= 0.8x nbdkit", r, r >= 0.8, "{:.2f}x")
        charts.append(("2: gateway TCP / nbdkit TCP", 0.8, c2))
    with open(f"{out}/gateway-ratios.dat", "w") as d:
        for title, target, rows in charts:
            d.write(f"# {title}; target {target}\n")
            for p, r, _ in rows:
                d.write(f"{p} {r:.3f}\n")
            d.write("\n\n")
EOF
if [[ -s $OUT/split.txt ]]; then
    echo; echo "where the gateway JVM's CPU per IO goes (perf; transport = the soft RDMA hop's TCP socket work, own = the appliance's code and the JVM):"
    grep -v '^SPLIT' "$OUT/split.txt"
fi
}
# The gateway chart: IOPS ratio per point for each comparison, with its target line.
chart() {
    command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot not installed: no chart (apt-get install gnuplot-nox)"; return 0; }
    grep -qs "^# 1:" "$OUT/gateway-ratios.dat" || return 0
    local when load
    when=$(sed -n 's/^date: *//p' "$OUT/machine.txt")
    load=$(sed -n 's/^loadavg: *\([^ ]* [^ ]* [^ ]*\).*/\1/p' "$OUT/machine.txt")
    gnuplot <<EOF
set terminal pngcairo size 1200,540 font ",10"
set output "$OUT/gateway.png"
set multiplot layout 1,2 title "nbd-gateway / nbdkit with fio's nbd engine: IOPS ratio per point (medians), $when, load average before: $load"
set style data histogram
set style fill solid 0.6 border -1
set boxwidth 0.7
set yrange [0:*]
set offsets 0, 0, 0.25, 0
set ylabel "IOPS ratio"
set xtics rotate by -35 font ",8"
set grid ytics
set key top left
set title "1: Unix socket gateway vs nbdkit TCP"
plot "$OUT/gateway-ratios.dat" index 0 using 2:xtic(1) title "gateway/nbdkit" lc rgb "#4477aa", 1.0 title "target 1.0" lw 2 lc rgb "#cc3311"
set title "2: TCP gateway vs nbdkit TCP"
plot "$OUT/gateway-ratios.dat" index 1 using 2:xtic(1) title "gateway/nbdkit" lc rgb "#4477aa", 0.8 title "target 0.8" lw 2 lc rgb "#cc3311"
unset multiplot
EOF
    echo "chart: $OUT/gateway.png"
    if [ -n "${CHART:-}" ]; then cp "$OUT/gateway.png" "$CHART" && echo "chart copied to $CHART"; fi
}
if [[ ${1:-} == --report ]]; then
    OUT=$2
    report
    chart
    exit 0
fi

missing=()
for tool in java nbdkit fio python3 taskset jfr; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]})); then
    echo "missing: ${missing[*]}" >&2
    echo "install with: apt-get install nbdkit fio python3 util-linux openjdk-17-jdk-headless (as needed)" >&2
    exit 1
fi
if [[ ! -f $jar ]]; then
    echo "missing $jar: build it with: cd $(dirname "$here") && mvn -B -q -o install -DskipTests -pl bench" >&2
    exit 1
fi
OUT=${OUT:-$(mktemp -d /tmp/rnbd-peers.XXXXXX)}
mkdir -p "$OUT"

if [ "$CPUS" = none ]; then pin=(); else pin=(taskset -c "$CPUS"); fi
jvm=("${pin[@]}" java -Xms1g -Xmx1g -XX:+AlwaysPreTouch -XX:MaxDirectMemorySize=2g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn
     ${POLL_USEC:+-Drnbd.bench.poll.usec=$POLL_USEC} ${SERVER_POLL_USEC:+-Drnbd.bench.server.poll.usec=$SERVER_POLL_USEC}
     -Drnbd.bench.batch="${BATCH:-4}" -cp "$jar")
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

pids_to_kill=()
wmem_file=/proc/sys/net/core/wmem_default
wmem_restore=
# the host's net.core.wmem_default back, if the gateway comparisons raised it (UNIX_WMEM)
restore_wmem() {
    if [[ -n $wmem_restore ]]; then { echo "$wmem_restore" >"$wmem_file"; } 2>/dev/null || true; fi
    wmem_restore=
}
cleanup() {
    exec 7>&- 2>/dev/null || true
    for p in "${pids_to_kill[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    restore_wmem
}
trap cleanup EXIT

# ---- machine and load --------------------------------------------------------------------
{
    echo "date:      $(date -u +%FT%TZ)"
    echo "machine:   nproc=$ncpu, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.1f GiB RAM", $2/1048576}' /proc/meminfo)"
    echo "jdk:       $(java -version 2>&1 | head -1)"
    echo "tools:     $(nbdkit --version 2>&1 | head -1), $(fio --version)"
    if [ "$CPUS" = none ]; then echo "placement: no taskset (nproc=$ncpu)"; else echo "placement: every process under 'taskset -c $CPUS' (nproc=$ncpu)"; fi
    echo "soft devices: poll.usec client ${POLL_USEC:-default}, server ${SERVER_POLL_USEC:-default}; gateway poll.usec ${GW_POLL_USEC:-default}; load generator batch ${BATCH:-4}"
    echo "loadavg:   $(cat /proc/loadavg) (before)"
    echo "points:    $POINTS, ${REPS}x${SECS}s each (fio ${FIO_REPS}x), size $SIZE"
} | tee "$OUT/machine.txt"
: >"$OUT/settings.txt"   # per phase: the settings beyond the default profile its figures ran with

# Per-process CPU ticks from /proc, to name what else ran during a phase.
snap() { python3 - "$1" <<'EOF'
import os, sys
out = []
for p in os.listdir('/proc'):
    if not p.isdigit():
        continue
    try:
        s = open(f'/proc/{p}/stat').read()
        comm = s[s.index('(') + 1:s.rindex(')')]
        f = s[s.rindex(')') + 2:].split()
        args = open(f'/proc/{p}/cmdline', 'rb').read().replace(b'\0', b' ').decode(errors='replace')[:90]
        out.append(f"{p}\t{int(f[11]) + int(f[12])}\t{comm}\t{args}")
    except (OSError, ValueError, IndexError):
        pass
open(sys.argv[1], 'w').write('\n'.join(out) + '\n')
EOF
}
# cpu_report NAME BEFORE AFTER SECONDS OURPIDS...: top consumers in % of one CPU, ours marked.
cpu_report() { python3 - "$@" <<'EOF'
import sys
name, a, b, secs, ours = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), set(sys.argv[5:])
def load(f):
    d = {}
    for line in open(f):
        p = line.rstrip('\n').split('\t')
        if len(p) == 4:
            d[p[0]] = (int(p[1]), p[2], p[3])
    return d
A, B = load(a), load(b)
rows = []
for pid, (t, comm, args) in B.items():
    d = t - A.get(pid, (0,))[0]
    if d > 0:
        rows.append((d / 100.0 / secs * 100, pid, comm, args))
rows.sort(reverse=True)
other = sum(r[0] for r in rows if r[1] not in ours)
import os
print(f"CPU during {name} ({secs:.0f} s): other processes used {other:.0f} % of one CPU (the machine has {os.cpu_count() * 100} %)")
for pct, pid, comm, args in rows[:8]:
    print(f"  {pct:6.1f} %  {'OURS ' if pid in ours else 'other'} {pid:>7} {comm:<16} {args}")
EOF
}

# ---- nbdkit -------------------------------------------------------------------------------
nbdport=$(free_port)
"${pin[@]}" nbdkit -f -i 127.0.0.1 -p "$nbdport" memory "$SIZE" >"$OUT/nbdkit.log" 2>&1 &
nbdpid=$!
pids_to_kill+=("$nbdpid")
for _ in $(seq 50); do
    (exec 3<>/dev/tcp/127.0.0.1/"$nbdport") 2>/dev/null && break
    sleep 0.1
done
echo "nbdkit:    pid $nbdpid, nbd://127.0.0.1:$nbdport, affinity $(taskset -cp "$nbdpid" | sed 's/.*: //')"

# ---- 1. loopback TCP bandwidth ------------------------------------------------------------
echo; echo "== loopback TCP bandwidth"
"${jvm[@]}" io.rnbd.bench.PeerBenchMain tcp --seconds 2 --reps 3 | tee "$OUT/tcp.txt"

# ---- 2. primary: same load generator, RNBD vs nbdkit --------------------------------------
if [[ $PRIMARY == 1 ]]; then
echo; echo "== primary: rnbd load generator -> RNBD (1 JVM) vs nbdkit memory (NBD client)"
snap "$OUT/cpu0"; t0=$(date +%s)
"${jvm[@]}" io.rnbd.bench.PeerBenchMain run --nbd "nbd://127.0.0.1:$nbdport" --peer-pid "$nbdpid" \
    --points "$POINTS" --reps "$REPS" --seconds "$SECS" --size "$SIZE" >"$OUT/primary.txt" 2>"$OUT/primary.err" &
runpid=$!
sleep 2; echo "loadgen JVM: pid $runpid, affinity $(taskset -cp "$runpid" | sed 's/.*: //')"
wait "$runpid"
t1=$(date +%s); snap "$OUT/cpu1"
grep -v '^RESULT' "$OUT/primary.txt"
echo "primary: $(sed -n 's/^SETTINGS //p' "$OUT/primary.txt" | head -1)" >>"$OUT/settings.txt"
cpu_report primary "$OUT/cpu0" "$OUT/cpu1" $((t1 - t0)) "$runpid" "$nbdpid" | tee "$OUT/cpu-primary.txt"
fi

# ---- 3. gateway: fio nbd engine on both sides, two comparisons -----------------------------
echo; echo "== gateway: fio --ioengine=nbd -> nbd-gateway (RNBD stack, 2nd JVM) over its Unix socket and over TCP, vs nbdkit over TCP"
wmem_host=$(cat "$wmem_file" 2>/dev/null || echo unknown)
if [[ $UNIX_WMEM != keep && $wmem_host =~ ^[0-9]+$ && $wmem_host -lt $UNIX_WMEM ]] \
        && { echo "$UNIX_WMEM" >"$wmem_file"; } 2>/dev/null; then
    wmem_restore=$wmem_host
fi
echo "net.core.wmem_default: $(cat "$wmem_file" 2>/dev/null || echo unknown) during the gateway comparisons (the host's: $wmem_host)" \
    | tee -a "$OUT/machine.txt"
gwport=$(free_port)
gwsock="$OUT/gw.sock"
mkfifo "$OUT/gw.in"
"${jvm[@]}" -Drnbd.bench.topology="${GW_TOPOLOGY:-profile}" io.rnbd.bench.PeerBenchMain gateway --port "$gwport" \
    --unix "$gwsock" --size "$SIZE" ${GW_POLL_USEC:+--poll-usec "$GW_POLL_USEC"} <"$OUT/gw.in" >"$OUT/gw.out" 2>"$OUT/gw.err" &
gwpid=$!
pids_to_kill+=("$gwpid")
exec 7>"$OUT/gw.in"
for _ in $(seq 300); do grep -q READY "$OUT/gw.out" 2>/dev/null && break; sleep 0.1; done
grep -q READY "$OUT/gw.out" || { echo "gateway did not start:"; cat "$OUT/gw.err"; exit 1; }
gwset=$(sed -n 's/^SETTINGS //p' "$OUT/gw.out" | head -1)
if [[ -n $wmem_restore ]]; then
    gwset="$( [[ $gwset == default ]] || echo "$gwset; ")net.core.wmem_default=$(cat "$wmem_file") (host: $wmem_restore)"
fi
echo "gateway: $gwset" >>"$OUT/settings.txt"
echo "gateway JVM: pid $gwpid, nbd://127.0.0.1:$gwport/rnbd0 and nbd+unix:///rnbd0?socket=$gwsock; topology ${GW_TOPOLOGY:-profile}; settings: $gwset"
# name, URI, the process that serves it (its CPU is counted per IO)
targets=("gateway-unix nbd+unix:///rnbd0?socket=$gwsock $gwpid" "gateway nbd://127.0.0.1:$gwport/rnbd0 $gwpid"
         "nbdkit nbd://127.0.0.1:$nbdport $nbdpid")
fio_run() { # NAME URI RW BS QD SECS
    "${pin[@]}" fio --name="$1" --ioengine=nbd --uri="$2" --rw="$3" --bs="$4" --iodepth="$5" --size="$SIZE" \
        --time_based --runtime="$6" --output-format=json 2>/dev/null
}
for target in "gateway nbd://127.0.0.1:$gwport/rnbd0" "nbdkit nbd://127.0.0.1:$nbdport"; do
    set -- $target
    "${pin[@]}" fio --name=fill --ioengine=nbd --uri="$2" --rw=write --bs=128k --iodepth=8 --size="$SIZE" \
        --output-format=json >/dev/null 2>&1                  # allocate every block once
done
# Warm the gateway up until its JIT is quiet (its compiler threads under 30 ms of CPU in a round
# of both sockets, both sizes, depth 1 and 32), 3 to 12 rounds: with a fixed few seconds C2 was
# still compiling, and its fresh heap still faulting in, through the first measured points,
# while nbdkit (C) needs no warm-up. The appliance runs for days: measure its steady state.
jit_ticks() { cat /proc/"$gwpid"/task/*/stat 2>/dev/null | awk '/\((C1|C2) CompilerThre\)/ {
    sub(/.*\) /, ""); split($0, f, " "); t += f[12] + f[13] } END { print t + 0 }'; }
rounds=0
while :; do
    j0=$(jit_ticks)
    fio_run warmup "nbd+unix:///rnbd0?socket=$gwsock" randrw 4k 32 1 >/dev/null
    fio_run warmup "nbd://127.0.0.1:$gwport/rnbd0" randrw 4k 32 1 >/dev/null
    fio_run warmup "nbd://127.0.0.1:$gwport/rnbd0" randrw 4k 1 1 >/dev/null
    fio_run warmup "nbd+unix:///rnbd0?socket=$gwsock" rw 128k 8 1 >/dev/null
    rounds=$((rounds + 1)); jit=$(( $(jit_ticks) - j0 ))
    ((rounds >= 3 && jit < 3 || rounds >= 12)) && break
done
echo "gateway warm-up: $rounds rounds of 4 s (JIT $((jit * 10)) ms in the last)"
fio_run warmup "nbd://127.0.0.1:$nbdport" randrw 4k 32 2 >/dev/null
snap "$OUT/cpu2"; t2=$(date +%s)
: >"$OUT/fio.jsonl"
for rep in $(seq "$FIO_REPS"); do
    for pt in ${POINTS//,/ }; do
        # The three targets back to back at each point, so a burst of outside load hits all of them.
        for target in "${targets[@]}"; do
            set -- $target
            python3 "$here/fio_point.py" "$1" "$pt" "$rep" "$2" "$SECS" "$SIZE" "$3" "${pin[@]}" >>"$OUT/fio.jsonl"
        done
    done
done
t3=$(date +%s); snap "$OUT/cpu3"
cpu_report gateway "$OUT/cpu2" "$OUT/cpu3" $((t3 - t2)) "$gwpid" "$nbdpid" | tee "$OUT/cpu-fio.txt"

# ---- 3b. where the gateway JVM's CPU per IO goes (perf): the soft transport's TCP socket work,
# the gateway's Unix socket, sleeping and waking, and the appliance's own code (bench/cpu_split.py)
if [[ $SPLIT == 1 ]] && command -v perf >/dev/null 2>&1 && command -v jcmd >/dev/null 2>&1; then
    echo; echo "== where the gateway JVM's CPU per IO goes (perf -g at 999 Hz over ${SECS} s of fio over the Unix socket)"
    hz=$(getconf CLK_TCK)
    : >"$OUT/split.jsonl"
    for pt in $SPLIT_POINTS; do
        IFS=: read -r rw bs qd <<<"$pt"
        "${pin[@]}" fio --name=split --ioengine=nbd --uri="nbd+unix:///rnbd0?socket=$gwsock" --rw="$rw" --bs="$bs" \
            --iodepth="$qd" --size="$SIZE" --time_based --runtime=$((SECS + 3)) --output-format=json \
            >"$OUT/split-$pt.fio.json" 2>/dev/null &
        fpid=$!
        sleep 1.5
        c0=$(awk '{print $14 + $15}' "/proc/$gwpid/stat"); w0=$(date +%s.%N)
        perf record -q -F 999 -g -p "$gwpid" -o "$OUT/split-$pt.data" -- sleep "$SECS" >/dev/null 2>&1 || true
        c1=$(awk '{print $14 + $15}' "/proc/$gwpid/stat"); w1=$(date +%s.%N)
        wait "$fpid" || true
        python3 - "$OUT/split-$pt.fio.json" "$c0" "$c1" "$w0" "$w1" "$hz" "$pt" >>"$OUT/split-cpu.txt" <<'EOF2'
import json, sys
f, c0, c1, w0, w1, hz, pt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
t = open(f).read()
j = json.loads(t[t.index("{"):])["jobs"][0]
r = j["read"] if j["read"]["io_bytes"] > 0 else j["write"]
ios = r["iops"] * (w1 - w0)
print(pt, (c1 - c0) / hz * 1e6 / max(ios, 1), r["iops"])
EOF2
    done
    jcmd "$gwpid" Compiler.perfmap >/dev/null 2>&1 || true
    while read -r pt cpu iops; do
        perf script -i "$OUT/split-$pt.data" 2>/dev/null \
            | python3 "$here/cpu_split.py" "$cpu" "$pt (fio over the Unix socket, $(printf '%.0f' "$iops") IOPS; settings: $gwset)" \
            | tee -a "$OUT/split.txt" | grep -v '^SPLIT' || true
    done <"$OUT/split-cpu.txt"
    grep '^SPLIT' "$OUT/split.txt" | sed 's/^SPLIT //' >"$OUT/split.jsonl" || true
    # the recordings stay in $OUT (perf script -i ... | cpu_split.py re-reads them)
else
    [[ $SPLIT == 1 ]] && echo "no perf or jcmd: the CPU split is not measured (apt-get install linux-perf)"
fi
exec 7>&-
wait "$gwpid" 2>/dev/null || true
restore_wmem

# ---- 4. profile of the RNBD hot path -------------------------------------------------------
if [[ $PROFILE == 1 ]]; then
    echo; echo "== JFR profile: RNBD randread/randwrite 4k depth 32 (5 s each)"
    "${jvm[@]}" -XX:StartFlightRecording=filename="$OUT/rnbd.jfr",settings=profile \
        io.rnbd.bench.PeerBenchMain run --points randread:4k:32,randwrite:4k:32 --reps 1 --seconds 5 \
        --size "$SIZE" >"$OUT/profile-run.txt" 2>"$OUT/profile-run.err"
    # Java frames (ExecutionSample) and threads blocked in native code (NativeMethodSample:
    # epoll, socket reads/writes, futex), which is where the time goes when wakeups dominate.
    jfr print --events jdk.ExecutionSample,jdk.NativeMethodSample "$OUT/rnbd.jfr" >"$OUT/samples.txt"
    python3 - "$OUT/samples.txt" <<'EOF' | tee "$OUT/profile.txt"
import re, sys, collections
top, first_rnbd, threads, native, n, nn = (collections.Counter(), collections.Counter(), collections.Counter(),
                                          collections.Counter(), 0, 0)
stack, thread, kind = [], None, None
def flush():
    global n, nn
    if not stack:
        return
    if kind == 'native':
        nn += 1
        own = next((f for f in stack if f.startswith('io.rnbd.')), '')
        native[f"{stack[0]}  <- {own}"] += 1
        return
    n += 1
    top[stack[0]] += 1
    own = next((f for f in stack if f.startswith('io.rnbd.')), '(no io.rnbd frame)')
    first_rnbd[own] += 1
    threads[re.sub(r'[-#]?\d+$', '', thread or '?')] += 1
for line in open(sys.argv[1]):
    s = line.strip()
    if s.startswith('jdk.ExecutionSample') or s.startswith('jdk.NativeMethodSample'):
        flush(); stack, thread = [], None
        kind = 'native' if s.startswith('jdk.NativeMethodSample') else 'java'
    elif s.startswith('sampledThread'):
        m = re.search(r'"([^"]*)"', s); thread = m.group(1) if m else s
    elif re.match(r'^[\w$.]+\.[\w$<>]+\(.*\)\s+line:', s):
        stack.append(re.sub(r'\s+line:.*', '', s))
flush()
print(f"{n} execution samples")
for title, c, tot in (("top frames", top, n), ("first io.rnbd frame on the stack", first_rnbd, n),
                      ("threads running Java", threads, n),
                      (f"threads parked in native code ({nn} native samples): top frame <- first io.rnbd frame",
                       native, nn)):
    print(f"-- {title}")
    for k, v in c.most_common(12):
        print(f"  {100 * v / max(tot, 1):5.1f} %  {k}")
EOF
fi

report
chart
echo; echo "loadavg:   $(cat /proc/loadavg) (after)"
echo "raw results, logs and the JFR recording: $OUT"
