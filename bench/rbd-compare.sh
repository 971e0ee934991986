#!/usr/bin/env bash
# Issue #19: what the appliance adds in front of Ceph RBD, in one run on one cluster (the
# project's one-node cluster, itests/ceph/one-node.sh: one mon, one memstore OSD, on this
# machine). Every tool gets its own image of the same size, written once end to end first
# (the rbd backend holds an image's exclusive lock, so tools cannot share one):
#
#   fio       fio --ioengine=rbd (librbd, C, no appliance)                    image bench-fio
#   rbdbench  rbd bench (librbd, C++, no appliance)                           image bench-rbd
#   backend   the rnbd load generator on the rbd backend (librbd through the
#             project's JNI library), no transport                            image bench-be
#   appliance the rnbd load generator on an RNBD device: RNBD client -> RTRS over two
#             rdma-soft devices -> RNBD server -> rbd backend, one JVM         image bench-app
#
# Points: 4 KiB random read/write at depth 32 (IOPS), 128 KiB sequential read/write at depth 8
# (MiB/s). Repetitions are interleaved (each rep runs every tool once), medians are reported,
# with the ratio appliance / fio (target: >= 0.85, the appliance adding at most 15 % to
# librbd alone) and appliance / rbd bench, backend / fio. The CPU other processes took during
# the run is read from /proc and printed: on a shared machine that is what moves the figures.
#
#   bench/rbd-compare.sh            # one command; ~4 min with the defaults
#
# Last, it measures the transport's floor on this machine (transport-floor, C, built with gcc)
# and prints the ceiling it leaves appliance / fio: when the machine is CPU-bound no transport
# that carries an IO as two loopback TCP messages, each with its own write and wake-up (as
# rdma-soft does when answers come one at a time), can do better, however lean its code. An
# estimate, not a bound: at depth a receiver shares wake-ups among messages (docs/scale-out.md,
# run M: sending the answers in batches of 3-4 gained nothing measurable).
#
# Needs: java 17, fio (with the rbd engine: Debian's has it), rbd/ceph (ceph-common), ceph-mon,
# ceph-osd, uuidgen, python3, and the built tree (mvn -B -q install -DskipTests: the bench jar
# and bundles/rnbd-backend-rbd/target/classes/native/librnbd-rbd.so).
#
# Environment knobs:
#   REPS=3                repetitions per point and tool
#   SECONDS_PER_POINT=5   length of each measurement (rbd bench: the IO total that takes
#                         about as long at the rates seen here)
#   SIZE=256              image size in MiB (4 images; the OSD (memstore) holds 4 x SIZE + 512 MiB of RAM)
#   OUT=dir               logs and raw results (default: a new /tmp/rnbd-rbd.*)
#   CEPH_PORT=            the monitor's port (default: a free one)
#   BATCH=4               the load generator's submission batch, as in compare-peers.sh
#   POLL_USEC=, SERVER_POLL_USEC=  the soft devices' poll.usec, client and server side (unset: the
#                         default profile's, an adaptive window that opens only while a CPU is spare,
#                         so the OSD keeps the CPUs it needs; 0 = never poll)
#   SPLIT=1               afterwards, where the appliance JVM's CPU per IO goes at SPLIT_POINTS
#                         (default "write:128k:8 randread:4k:32"): perf -g of the appliance target
#                         alone, put down to the soft transport's socket work, waking, librbd and
#                         the appliance's own code (bench/cpu_split.py; needs perf and jcmd); 0 skips
#   The appliance's settings beyond the default profile (from the bench JVM's SETTINGS line) are
#   printed beside its figures; "default" when there are none.
#   CLIENT_CPUS=          run fio, rbd bench and the bench JVM under `taskset -c CLIENT_CPUS`
#                         (e.g. 1), the cluster free (compare-peers.sh's CPUS pins every
#                         process; here the OSD must stay free); default: every tool free. The same
#                         placement for all tools, so the ratios stay like for like
#                         (docs/scale-out.md, "Where the threads run": one CPU saved the
#                         appliance 13-19 us per IO at 4 KiB and fio nothing)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
jar=${JAR:-$here/target/benchmarks.jar}
native=$root/bundles/rnbd-backend-rbd/target/classes/native
script=$root/itests/ceph/one-node.sh
REPS=${REPS:-3}
SECS=${SECONDS_PER_POINT:-5}
SIZE=${SIZE:-256}
POINTS="randread:4k:32 randwrite:4k:32 read:128k:8 write:128k:8"

report() {
python3 - "$OUT" <<'EOF' | tee "$OUT/table.txt"
import json, statistics, sys, collections
out = sys.argv[1]
rows = [json.loads(l) for l in open(f"{out}/results.jsonl") if l.strip()]
by = collections.defaultdict(list)
for r in rows:
    by[(r["target"], r["point"])].append(r)
M = {k: {f: statistics.median(x[f] for x in v) for f in ("iops", "mibPerSecond", "meanUs")} | {"n": len(v)}
     for k, v in by.items()}
points = ["randread:4k:32", "randwrite:4k:32", "read:128k:8", "write:128k:8"]
tools = ["fio", "rbdbench", "backend", "appliance"]
try:
    settings = open(f"{out}/settings.txt").read().strip() or "not recorded"
except OSError:
    settings = "not recorded (a run before issue 36)"
print(f"\n== medians of {max(v['n'] for v in M.values())} runs per point and tool "
      f"(4 KiB: IOPS; 128 KiB: MiB/s; mean latency in us)")
print(f"the appliance's settings beyond the default profile: {settings} (also the last column)")
print(f"{'point':<17}" + "".join(f"{t:>20}" for t in tools) + f"{'app/fio':>9}{'app/rbd':>9}{'be/fio':>8}  settings")
def val(t, p):
    m = M.get((t, p))
    if not m:
        return None
    return m["iops"] if ":4k:" in p else m["mibPerSecond"]
for p in points:
    cells = []
    for t in tools:
        m = M.get((t, p))
        cells.append(f"{val(t, p):>11.0f} ({m['meanUs']:>5.0f} us)" if m else f"{'-':>20}")
    def ratio(a, b):
        x, y = val(a, p), val(b, p)
        return f"{x / y:.2f}" if x and y else "-"
    print(f"{p:<17}" + "".join(f"{c:>20}" for c in cells) + f"{ratio('appliance', 'fio'):>9}"
          f"{ratio('appliance', 'rbdbench'):>9}{ratio('backend', 'fio'):>8}  {settings}")
C = {k: statistics.median(x["cpuUsPerIo"] for x in v) for k, v in by.items() if all("cpuUsPerIo" in x for x in v)}
print(f"\nCPU per IO in us (the client process + the OSD; load-independent where IOPS are not)")
print(f"{'point':<17}" + "".join(f"{t:>12}" for t in tools) + f"{'app/fio':>9}{'be/fio':>8}")
for p in points:
    cells = [f"{C[(t, p)]:>12.1f}" if (t, p) in C else f"{'-':>12}" for t in tools]
    rat = lambda a: f"{C[(a, p)] / C[('fio', p)]:.2f}" if (a, p) in C and ("fio", p) in C else "-"
    print(f"{p:<17}" + "".join(cells) + f"{rat('appliance'):>9}{rat('backend'):>8}")
print("\ntarget: the appliance adds at most 15 % to librbd alone (appliance / fio >= 0.85):")
for p in points:
    x, y = val("appliance", p), val("fio", p)
    if x and y:
        print(f"  {'MET   ' if x / y >= 0.85 else 'MISSED'} {p}: {x / y:.2f} ({settings})")
try:
    F = {d["point"]: d for d in (json.loads(l) for l in open(f"{out}/floor.jsonl") if l.strip())}
except OSError:
    F = {}
if F:
    # CPU-bound (the benchmark takes most of the 2 CPUs at every point), IOPS go as 1 / CPU per
    # IO: a transport that costs at least `floor` per IO cannot bring the appliance above
    # fio / (fio + floor), nor above fio / (backend + floor) with librbd reached through the JNI
    print("\nthe transport's floor (two loopback TCP messages, a wake-up each, C, one CPU: "
          "transport-floor) and the ceiling it leaves appliance / fio on this machine:")
    print(f"{'point':<17}{'floor us':>9}{'fio us':>8}{'ceiling':>9}{'backend us':>11}{'ceiling':>9}  target 0.85")
    for p in points:
        if p in F and (("fio", p) in C):
            f, c = F[p]["cpuUsPerIo"], C[("fio", p)]
            b = C.get(("backend", p))
            top = c / (c + f)
            top_b = f"{c / (b + f):>9.2f}" if b else f"{'-':>9}"
            print(f"{p:<17}{f:>9.1f}{c:>8.1f}{top:>9.2f}{(b or 0):>11.1f}{top_b}  "
                  f"{'within reach' if top >= 0.85 else 'out of reach if each message pays its own write and wake-up'}")
EOF
}
if [[ ${1:-} == --report ]]; then
    OUT=$2; report
    [[ -s $OUT/split.txt ]] && { echo; grep -v '^SPLIT' "$OUT/split.txt"; }
    exit 0
fi

missing=()
for tool in java fio rbd ceph ceph-mon ceph-osd uuidgen python3; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if ((${#missing[@]})); then
    echo "missing: ${missing[*]} (apt-get install fio ceph-common ceph-mon ceph-osd uuid-runtime python3)" >&2
    exit 1
fi
CLIENT_CPUS=${CLIENT_CPUS:-}
pin=()
if [[ -n $CLIENT_CPUS ]]; then
    if [[ ! $CLIENT_CPUS =~ ^[0-9]+([,-][0-9]+)*$ ]] || ! taskset -c "$CLIENT_CPUS" true 2>/dev/null; then
        echo "CLIENT_CPUS=$CLIENT_CPUS: not a CPU list this machine has (CPUs 0-$(($(nproc) - 1)); needs taskset)" >&2
        exit 1
    fi
    pin=(taskset -c "$CLIENT_CPUS")
fi
export CLIENT_CPUS  # measure.py pins fio and rbd bench with it
for f in "$jar" "$native/librnbd-rbd.so"; do
    [[ -f $f ]] || { echo "missing $f: build with: cd $root && mvn -B -q install -DskipTests" >&2; exit 1; }
done
fio --enghelp=rbd >/dev/null 2>&1 || { echo "this fio has no rbd engine" >&2; exit 1; }
OUT=${OUT:-$(mktemp -d /tmp/rnbd-rbd.XXXXXX)}
mkdir -p "$OUT"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=${CEPH_PORT:-$(free_port)}

cleanup() { bash "$script" stop "$OUT/ceph" >/dev/null 2>&1 || true; }
trap cleanup EXIT

# CPU from /proc: the machine's busy ticks (/proc/stat), this script's own and its waited-for
# children's (fio, rbd, java: cutime/cstime of $$), the cluster's daemons, and every process's
# ticks, so that what OTHER processes took during the run can be named.
snap() { python3 - "$1" "$$" <<'EOF2'
import os, sys
out = []
with open('/proc/stat') as f:
    cpu = [int(x) for x in f.readline().split()[1:]]
out.append(f"machine\t{sum(cpu[:8]) - cpu[3] - cpu[4]}\t-\t-")
s = open(f'/proc/{sys.argv[2]}/stat').read()
f = s[s.rindex(')') + 2:].split()
out.append(f"self\t{sum(int(x) for x in f[11:15])}\t-\t-")
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
EOF2
}
# cpu_report BEFORE AFTER SECONDS OUR_PIDS...: CPU in % of one CPU (100 % = one CPU busy)
cpu_report() { python3 - "$@" <<'EOF2'
import os, sys
a, b, secs, ours = sys.argv[1], sys.argv[2], float(sys.argv[3]), set(sys.argv[4:])
tck = os.sysconf('SC_CLK_TCK')
def load(f):
    d = {}
    for line in open(f):
        p = line.rstrip('\n').split('\t')
        if len(p) == 4:
            d[p[0]] = (int(p[1]), p[2], p[3])
    return d
A, B = load(a), load(b)
pct = lambda ticks: 100.0 * ticks / tck / secs
delta = lambda k: B[k][0] - A.get(k, (0,))[0]
machine, mine = pct(delta('machine')), pct(delta('self')) + sum(pct(delta(p)) for p in ours if p in B)
print(f"CPU during the run ({secs:.0f} s, from /proc): the machine was busy {machine:.0f} % of one CPU "
      f"(it has {os.cpu_count() * 100} %); this benchmark (its tools, JVMs and the cluster's daemons) "
      f"{mine:.0f} %; OTHER processes {max(0.0, machine - mine):.0f} %")
rows = sorted(((pct(delta(p)), p, v[1], v[2]) for p, v in B.items() if p not in ('machine', 'self')
               and p not in ours and delta(p) > 0), reverse=True)
print("top other processes:")
for c, pid, comm, args in rows[:8]:
    print(f"  {c:6.1f} %  {pid:>7} {comm:<16} {args}")
EOF2
}

{
    echo "date:      $(date -u +%FT%TZ)"
    echo "machine:   nproc=$(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.1f GiB RAM", $2/1048576}' /proc/meminfo)"
    echo "jdk:       $(java -version 2>&1 | head -1)"
    echo "tools:     $(fio --version), $(rbd --version | cut -d' ' -f1-3)"
    echo "loadavg:   $(cat /proc/loadavg) (before)"
    echo "points:    $POINTS, ${REPS}x${SECS}s each, images of $SIZE MiB"
    echo "soft devices: poll.usec client ${POLL_USEC:-default}, server ${SERVER_POLL_USEC:-default}; load generator batch ${BATCH:-4}"
    if [[ -n $CLIENT_CPUS ]]; then
        echo "placement: fio, rbd bench and the bench JVM on CPUs $CLIENT_CPUS (taskset), the cluster free"
    else
        echo "placement: every tool free"
    fi
} | tee "$OUT/machine.txt"

echo; echo "== one-node cluster (mon port $port)"
# four images in RAM and room for the OSD's own; Ceph's default watch timeout: this machine
# may be busy enough to starve a client's watch pings for the tests' 5 s
env_lines=$(ONE_NODE_MEMSTORE_MIB=$((4 * SIZE + 512)) ONE_NODE_WATCH_TIMEOUT=30 bash "$script" start "$OUT/ceph" "$port")
export CEPH_CONF=$OUT/ceph/ceph.conf
osd=$(cat "$OUT/ceph/pid.osd")
for img in bench-fio bench-rbd bench-be bench-app; do
    rbd create --size "${SIZE}M" "rbd/$img"
    rbd bench --io-type write --io-pattern seq --io-size 4M --io-threads 4 --io-total "${SIZE}M" "rbd/$img" >/dev/null
done
echo "$env_lines"

# One measurement of fio or rbd bench: runs the tool, reads its result, and charges it the CPU
# it used (its own, from wait4's rusage, start-up included) plus the OSD's over the same time,
# per IO: the same "client + OSD CPU per IO" RbdBenchMain reports for its JVM. Unlike IOPS it
# barely moves with what other processes do to the machine.
cat >"$OUT/measure.py" <<'EOF2'
import json, os, re, subprocess, sys, time
tool, image, rw, bs, qd, secs, osd, point, rep = sys.argv[1:10]
tck = os.sysconf('SC_CLK_TCK')
def osd_ticks():
    f = open(f'/proc/{osd}/stat').read()
    f = f[f.rindex(')') + 2:].split()
    return int(f[11]) + int(f[12])
size = int(bs[:-1]) * 1024
if tool == 'fio':
    cmd = ['fio', '--name=x', '--ioengine=rbd', '--clientname=admin', '--pool=rbd', f'--rbdname={image}',
           f'--rw={rw}', f'--bs={bs}', f'--iodepth={qd}', '--time_based', f'--runtime={secs}',
           '--output-format=json']
else:
    # rbd bench has no time limit: an IO total that takes about secs at this machine's rates
    total = int(secs) * (40 if bs == '4k' else 400)
    cmd = ['rbd', 'bench', '--io-type', rw.replace('rand', ''), '--io-pattern', 'rand' if rw.startswith('rand') else 'seq',
           '--io-size', bs.upper(), '--io-threads', qd, '--io-total', f'{total}M', f'rbd/{image}']
# CLIENT_CPUS: taskset execs the tool in place, so wait4 still charges the tool's own CPU
if os.environ.get('CLIENT_CPUS'):
    cmd = ['taskset', '-c', os.environ['CLIENT_CPUS']] + cmd
o0 = osd_ticks()
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
out = p.stdout.read()
_, status, ru = os.wait4(p.pid, 0)
cpu_s = ru.ru_utime + ru.ru_stime + (osd_ticks() - o0) / tck
if tool == 'fio':
    j = json.loads(out[out.index('{'):])['jobs'][0]
    r = j['read'] if j['read']['io_bytes'] > 0 else j['write']
    ios, iops, mean = r['total_ios'], r['iops'], r['lat_ns']['mean'] / 1e3
else:
    m = re.search(r'elapsed:\s*[\d.]+\s+ops:\s*(\d+)\s+ops/sec:\s*([\d.]+)', out)
    if not m:
        sys.exit('rbd bench gave no summary: ' + out[-300:])
    ios, iops, mean = int(m.group(1)), float(m.group(2)), 0  # "elapsed" is whole seconds, ops/sec is not
print(json.dumps({'target': 'rbdbench' if tool == 'rbd' else tool, 'point': point, 'rep': int(rep), 'iops': iops,
                  'mibPerSecond': iops * size / 2**20, 'meanUs': mean, 'cpuUsPerIo': cpu_s * 1e6 / max(1, ios)}))
EOF2

: >"$OUT/results.jsonl"
snap "$OUT/cpu0"; t0=$(date +%s)
for rep in $(seq "$REPS"); do
    echo; echo "== rep $rep/$REPS"
    for pt in $POINTS; do
        IFS=: read -r rw bs qd <<<"$pt"
        python3 "$OUT/measure.py" fio bench-fio "$rw" "$bs" "$qd" "$SECS" "$osd" "$pt" "$rep" | tee -a "$OUT/results.jsonl"
        python3 "$OUT/measure.py" rbd bench-rbd "$rw" "$bs" "$qd" "$SECS" "$osd" "$pt" "$rep" | tee -a "$OUT/results.jsonl"
    done
    "${pin[@]}" java -Xms512m -Xmx512m -XX:+AlwaysPreTouch -XX:MaxDirectMemorySize=1g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
        -Djava.library.path="$native" -Drnbd.bench.batch="${BATCH:-4}" ${POLL_USEC:+-Drnbd.bench.poll.usec=$POLL_USEC} \
        ${SERVER_POLL_USEC:+-Drnbd.bench.server.poll.usec=$SERVER_POLL_USEC} -cp "$jar" io.rnbd.bench.RbdBenchMain run \
        --conf "$CEPH_CONF" --backend-image bench-be --appliance-image bench-app --points "${POINTS// /,}" \
        --rep "$rep" --seconds "$SECS" --peer-pid "$osd" 2>"$OUT/java-$rep.err" >"$OUT/java-$rep.out"
    sed -n 's/^SETTINGS //p' "$OUT/java-$rep.out" | head -1 >"$OUT/settings.txt"
    grep '^RESULT' "$OUT/java-$rep.out" | sed 's/^RESULT //' | python3 -c 'import json,sys
for l in sys.stdin:
    d=json.loads(l); print(json.dumps({k: d[k] for k in ("target","point","rep","iops","mibPerSecond","meanUs","cpuUsPerIo")}))' \
        | tee -a "$OUT/results.jsonl"
done
t1=$(date +%s); snap "$OUT/cpu1"

# The transport's floor at each point's message sizes (bench/src/main/c/transport-floor.c):
# what RTRS's two messages per IO over rdma-soft's loopback TCP cost in C with nothing else,
# pinned to one CPU so that no wake-up crosses CPUs (the cheapest case). Sizes: rdma-soft's
# 32-byte frame header + the RTRS message (a read's SEND: rtrs_msg_rdma_read with one
# descriptor, 24 B, + rnbd_msg_io, 32 B; a write's WRITE_WITH_IMM: data + rnbd_msg_io +
# rtrs_msg_rdma_write, 4 B) and the answer (a read's data by WRITE_WITH_IMM; a write's bare imm).
: >"$OUT/floor.jsonl"
if command -v gcc >/dev/null 2>&1 && command -v taskset >/dev/null 2>&1 \
        && gcc -O2 -Wall -pthread -o "$OUT/transport-floor" "$here/src/main/c/transport-floor.c"; then
    while read -r pt req ans n; do
        taskset -c 0 "$OUT/transport-floor" "$req" "$ans" "$n" \
            | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); d["point"]=sys.argv[1]; print(json.dumps(d))' "$pt" \
            | tee -a "$OUT/floor.jsonl"
    done <<'EOF2'
randread:4k:32 88 4128 40000
randwrite:4k:32 4164 32 40000
read:128k:8 88 131104 15000
write:128k:8 131140 32 15000
EOF2
else
    echo "no gcc or taskset: the transport's floor is not measured"
fi
# Where the appliance JVM's CPU per IO goes (issue 36): the appliance target alone at SPLIT_POINTS,
# perf -g over its measured seconds, Java named through the JVM's perf map, each sample put down
# to the soft transport's TCP socket work, sleeping/waking, librbd (the backend) or the appliance's
# own code (bench/cpu_split.py). Outside the interleaved reps, so it moves none of their figures.
if [[ ${SPLIT:-1} == 1 ]] && command -v perf >/dev/null 2>&1 && command -v jcmd >/dev/null 2>&1; then
    echo; echo "== where the appliance JVM's CPU per IO goes (perf -g at 999 Hz, ${SECS} s per point)"
    hz=$(getconf CLK_TCK)
    : >"$OUT/split.txt"
    for pt in ${SPLIT_POINTS:-write:128k:8 randread:4k:32}; do
        "${pin[@]}" java -Xms512m -Xmx512m -XX:+AlwaysPreTouch -XX:MaxDirectMemorySize=1g \
            -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Djava.library.path="$native" -Drnbd.bench.batch="${BATCH:-4}" \
            ${POLL_USEC:+-Drnbd.bench.poll.usec=$POLL_USEC} ${SERVER_POLL_USEC:+-Drnbd.bench.server.poll.usec=$SERVER_POLL_USEC} \
            -cp "$jar" io.rnbd.bench.RbdBenchMain run --conf "$CEPH_CONF" --backend-image bench-be \
            --appliance-image bench-app --points "$pt" --only appliance --seconds $((SECS + 4)) --peer-pid "$osd" \
            >"$OUT/split-$pt.out" 2>"$OUT/split-$pt.err" &
        jp=$!
        # the measured point's own line: the warm-ups before it print MEASURING warmup ...
        for _ in $(seq 600); do grep -q '^MEASURING appliance ' "$OUT/split-$pt.err" 2>/dev/null && break; sleep 0.2; done
        sleep 1
        c0=$(awk '{print $14 + $15}' "/proc/$jp/stat"); w0=$(date +%s.%N)
        perf record -q -F 999 -g -p "$jp" -o "$OUT/split-$pt.data" -- sleep "$SECS" >/dev/null 2>&1 || true
        c1=$(awk '{print $14 + $15}' "/proc/$jp/stat"); w1=$(date +%s.%N)
        jcmd "$jp" Compiler.perfmap >/dev/null 2>&1 || true
        wait "$jp" || true
        iops=$(sed -n 's/^RESULT //p' "$OUT/split-$pt.out" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["iops"])')
        cpu=$(python3 -c "print(($c1 - $c0) / $hz * 1e6 / max(1, $iops * ($w1 - $w0)))")
        perf script -i "$OUT/split-$pt.data" 2>/dev/null \
            | python3 "$here/cpu_split.py" "$cpu" "$pt (the appliance target, $(printf '%.0f' "$iops") IOPS; settings: $(cat "$OUT/settings.txt"))" \
            | tee -a "$OUT/split.txt" | grep -v '^SPLIT' || true
        # the recording stays in $OUT
    done
fi

echo
cpu_report "$OUT/cpu0" "$OUT/cpu1" $((t1 - t0)) "$osd" "$(cat "$OUT/ceph/pid.mon")" | tee "$OUT/cpu.txt"
report
if [[ -s $OUT/split.txt ]]; then
    echo; echo "where the appliance JVM's CPU per IO goes (transport = the soft RDMA hop's TCP socket work, own = the appliance's code and the JVM, backend = librbd):"
    grep -v '^SPLIT' "$OUT/split.txt"
fi
echo; echo "loadavg:   $(cat /proc/loadavg) (after)"
echo "raw results and logs: $OUT"
