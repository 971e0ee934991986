#!/usr/bin/env bash
# Issue 36: what an idle appliance costs. Starts a distribution (the default profile: two soft
# devices, the appliance's RTRS session to its own server, rnbd0 mapped, the NBD gateway, JMX,
# /metrics and the dashboard) as `bin/karaf server` in a private copy with every port moved to a
# free one, lets it settle, and counts the Karaf JVM's CPU (utime + stime from /proc) over an idle
# period; then drives fio through the gateway for a while and counts an idle period again, so
# that polling left open by the load would show. Per thread, the busiest threads of each period
# and the soft devices' poll counters (rdma:statistic) before and after it.
#
#   bench/idle-cost.sh                          # this checkout's distribution
#   bench/idle-cost.sh path/to/rnbd-assembly-*.tar.gz   # another (e.g. one built from main: "before")
#
# Environment: IDLE_SECONDS=60 (each idle period), SETTLE_SECONDS=30 (after start and after the
# load, before counting), LOAD_SECONDS=20 (fio randread 4k at depth 1, then write 128k at depth 8,
# through the gateway's TCP port, half each), OUT=dir. Needs: java 17, python3, fio (optional:
# without it the load period is skipped), the built distribution
# (karaf-assembly/target/rnbd-assembly-*.tar.gz). Prints one summary line per period:
#   IDLE <label> <seconds> s: <cpu ms> ms of CPU = <percent> % of one CPU; polls +N, poll_hits +N, polls_skipped +N
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
tarball=${1:-$(ls "$root"/karaf-assembly/target/rnbd-assembly-*.tar.gz 2>/dev/null | head -n 1 || true)}
[[ -f $tarball ]] || { echo "no distribution: build it (mvn -B -q install -DskipTests) or name a tar.gz" >&2; exit 1; }
IDLE=${IDLE_SECONDS:-60}
SETTLE=${SETTLE_SECONDS:-30}
LOAD=${LOAD_SECONDS:-20}
OUT=${OUT:-$(mktemp -d /tmp/rnbd-idle.XXXXXX)}
mkdir -p "$OUT"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

home=$OUT/karaf
rm -rf "$home" "$OUT/unpack"
mkdir -p "$OUT/unpack"
tar xzf "$tarball" -C "$OUT/unpack"
mv "$OUT/unpack"/* "$home"
rmdir "$OUT/unpack"

# key = value in etc/FILE, replacing the key's line or adding it
set_cfg() {
    local f=$home/etc/$1
    touch "$f"
    python3 - "$f" "$2" "$3" <<'EOF'
import sys
f, key, value = sys.argv[1:]
lines = open(f).read().splitlines()
out, done = [], False
for l in lines:
    s = l.strip()
    if s.startswith(key + " ") or s.startswith(key + "="):
        out.append(f"{key} = {value}"); done = True
    else:
        out.append(l)
if not done:
    out.append(f"{key} = {value}")
open(f, "w").write("\n".join(out) + "\n")
EOF
}
ssh=$(free_port); nbd=$(free_port); rtrs=$(free_port)
set_cfg org.apache.karaf.shell.cfg sshPort "$ssh"
set_cfg org.ops4j.pax.web.cfg org.osgi.service.http.port "$(free_port)"
set_cfg org.apache.karaf.management.cfg rmiRegistryPort "$(free_port)"
set_cfg org.apache.karaf.management.cfg rmiServerPort "$(free_port)"
set_cfg org.ops4j.pax.url.mvn.cfg org.ops4j.pax.url.mvn.offline true
# the features write these at first boot unless they exist
set_cfg io.rnbd.nbd.gateway.cfg port "$nbd"
set_cfg io.rnbd.rtrs.server.cfg port "$rtrs"
set_cfg io.rnbd.rtrs.client.session-appliance.cfg paths "127.0.0.1@127.0.0.1:$rtrs,127.0.0.2@127.0.0.2:$rtrs"
# what the profile says about polling, as shipped (the distribution's own files)
grep -h 'poll.usec' "$home"/etc/io.rnbd.*.cfg 2>/dev/null | grep -v '^#' | sed 's/^/profile: /' | tee "$OUT/profile.txt" || true

if [[ -z ${JAVA_HOME:-} ]]; then
    java_bin=$(readlink -f "$(command -v java)")
    export JAVA_HOME=${java_bin%/bin/java}
fi
"$home/bin/karaf" server >"$OUT/console.out" 2>&1 &
karaf=$!
cleanup() {
    "$home/bin/stop" >/dev/null 2>&1 || true
    for _ in $(seq 60); do kill -0 "$karaf" 2>/dev/null || break; sleep 0.5; done
    kill "$karaf" 2>/dev/null || true
}
trap cleanup EXIT

# Karaf's client ends its session when its stdin reaches EOF, before the command's output arrives
# (./appliance says the same): give it a stdin that stays open while this script runs.
console() { "$home/bin/client" -a "$ssh" -u karaf -p karaf -r 30 -d 2 "$@" 2>/dev/null \
    < <(while kill -0 $$ 2>/dev/null; do sleep 1; done); }
echo "started $tarball (pid $karaf), waiting for rnbd0 on nbd://127.0.0.1:$nbd"
up=0
for _ in $(seq 240); do
    if console "rnbd:devices" 2>/dev/null | grep -qi 'rnbd0.*mapped'; then up=1; break; fi
    sleep 1
done
((up)) || { echo "the appliance did not map rnbd0 within 4 minutes; see $home/data/log/karaf.log" >&2; exit 1; }
jvm=$(pgrep -f "karaf.base=$home" | head -n 1 || true)
[[ -n $jvm ]] || jvm=$karaf
echo "up: JVM pid $jvm"

ticks() { awk '{print $14 + $15}' "/proc/$jvm/stat"; }
thread_ticks() { for t in /proc/"$jvm"/task/*; do
    printf '%s\t%s\n' "$(cat "$t/comm" 2>/dev/null)" "$(awk '{print $14 + $15}' "$t/stat" 2>/dev/null)"; done; }
counters() { console "rdma:statistic --json" 2>/dev/null | python3 -c '
import json, sys
text = sys.stdin.read()
try:
    rows = json.loads(text[text.index("["):])
except ValueError:
    print("0 0 0"); sys.exit()
tot = {"polls": 0, "poll_hits": 0, "polls_skipped": 0}
for r in rows:
    c = r.get("counters", r)
    for k in tot:
        tot[k] += int(c.get(k, 0) or 0)
print(tot["polls"], tot["poll_hits"], tot["polls_skipped"])'; }

# idle_period LABEL: CPU of the Karaf JVM over IDLE seconds, after SETTLE seconds of nothing
idle_period() {
    local label=$1
    sleep "$SETTLE"
    local c0 t0 c1 t1 p0 p1 hz
    hz=$(getconf CLK_TCK)
    read -r -a p0 <<<"$(counters)"
    thread_ticks >"$OUT/threads-$label-0.tsv"
    c0=$(ticks); t0=$(date +%s.%N)
    local load0; load0=$(cut -d' ' -f1-4 /proc/loadavg)
    sleep "$IDLE"
    c1=$(ticks); t1=$(date +%s.%N)
    thread_ticks >"$OUT/threads-$label-1.tsv"
    read -r -a p1 <<<"$(counters)"
    python3 - "$label" "$c0" "$c1" "$t0" "$t1" "$hz" "${p0[@]}" "${p1[@]}" "$load0" "$(cut -d' ' -f1-4 /proc/loadavg)" \
        "$OUT/threads-$label-0.tsv" "$OUT/threads-$label-1.tsv" <<'EOF' | tee -a "$OUT/idle.txt"
import sys, collections
label, c0, c1, t0, t1, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
p0, p1 = [int(x) for x in sys.argv[7:10]], [int(x) for x in sys.argv[10:13]]
load0, load1, f0, f1 = sys.argv[13:17]
secs = t1 - t0
ms = (c1 - c0) * 1000 / hz
print(f"IDLE {label} {secs:.0f} s: {ms:.0f} ms of CPU = {ms / 10 / secs:.2f} % of one CPU; "
      f"polls +{p1[0] - p0[0]}, poll_hits +{p1[1] - p0[1]}, polls_skipped +{p1[2] - p0[2]} "
      f"(load average {load0} before, {load1} after)")
def load(f):
    d = collections.Counter()
    for l in open(f):
        parts = l.rstrip("\n").split("\t")
        if len(parts) == 2 and parts[1].isdigit():
            d[parts[0]] += int(parts[1])
    return d
a, b = load(f0), load(f1)
rows = sorted(((b[k] - a.get(k, 0), k) for k in b), reverse=True)[:8]
print("  busiest threads (ms): " + ", ".join(f"{n} {d * 1000 // hz}" for d, n in rows if d > 0))
EOF
}

echo "== idle after start (settle ${SETTLE} s, count ${IDLE} s)"
idle_period start
if command -v fio >/dev/null 2>&1 && ((LOAD > 0)); then
    echo "== load: fio through the gateway for ${LOAD} s"
    fio --name=load1 --ioengine=nbd --uri="nbd://127.0.0.1:$nbd/rnbd0" --rw=randread --bs=4k --iodepth=1 \
        --size=256m --time_based --runtime=$((LOAD / 2)) --output-format=terse >/dev/null 2>&1 || echo "fio failed"
    fio --name=load2 --ioengine=nbd --uri="nbd://127.0.0.1:$nbd/rnbd0" --rw=write --bs=128k --iodepth=8 \
        --size=256m --time_based --runtime=$((LOAD / 2)) --output-format=terse >/dev/null 2>&1 || echo "fio failed"
    read -r -a pl <<<"$(counters)"
    echo "after the load: polls ${pl[0]}, poll_hits ${pl[1]}, polls_skipped ${pl[2]} (all since start)" | tee -a "$OUT/idle.txt"
    echo "== idle after the load (settle ${SETTLE} s, count ${IDLE} s)"
    idle_period after-load
fi
echo "results: $OUT/idle.txt"
