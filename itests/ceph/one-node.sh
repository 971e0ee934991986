#!/bin/bash
# A one-node Ceph cluster on 127.0.0.1 for the tests and benchmarks of rnbd-backend-rbd:
# one mon, one OSD on memstore (RAM, gone when it stops), cephx on, pool "rbd", and a cephx
# user client.rnbd limited to that pool (what an appliance server would be given).
# No systemd, no ceph-mgr, nothing outside DIR; every daemon runs in the foreground of a
# background job so that its PID is known, and "stop" stops exactly those PIDs.
#
#   one-node.sh start DIR [MON_PORT]   MON_PORT default 3300; prints the lines
#                                      CEPH_CONF=DIR/ceph.conf and CEPH_KEYRING_RNBD=...
#                                      when the OSD is up and the pool is ready
#   one-node.sh stop DIR               SIGTERM the OSD then the mon, wait up to 10 s
#                                      each, then SIGKILL what is left
#   one-node.sh osd-pause DIR | osd-resume DIR   SIGSTOP/SIGCONT the OSD: Ceph stops
#                                      answering with its data kept (memstore would lose
#                                      it in a restart)
#
# Environment: ONE_NODE_MEMSTORE_MIB (1024) is the OSD's capacity, all of it RAM once written;
# ONE_NODE_WATCH_TIMEOUT (5 s; Ceph's default is 30) is how long a client that died keeps its
# watch, and so an RBD exclusive lock: short for takeover tests, long where a loaded machine
# could starve a live client's heartbeats (benchmarks). ONE_NODE_WAIT_FACTOR (1) stretches the
# waits for the mon and the OSD (30 s and 60 s): the rxe guest's TCG runs Ceph 20 times slower.
#
# Exit status 77 (the "skipped" of automake and nbdkit's tests) with one line on stderr
# when a prerequisite is missing: callers turn it into a skip with that reason.
# Needs Debian's ceph-mon ceph-osd ceph-common and uuidgen (uuid-runtime); about 10 s and
# well under 1 GiB (mon ~40 MB, OSD 0.2-0.4 GB plus what is written).
set -eu
cmd=${1:?usage: one-node.sh start|stop|osd-pause|osd-resume DIR [MON_PORT]}
D=${2:?directory}
PORT=${3:-3300}

pid_of() { [ -f "$D/pid.$1" ] && cat "$D/pid.$1"; }

stop_one() {
  local p
  p=$(pid_of "$1") || return 0
  # a recorded PID that now belongs to another program is left alone
  [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "ceph-$1" ] || return 0
  kill -CONT "$p" 2>/dev/null || true   # a paused OSD cannot act on SIGTERM
  kill "$p" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.2; done
  kill -9 "$p" 2>/dev/null || true
}

case "$cmd" in
  stop)
    stop_one osd
    stop_one mon
    exit 0 ;;
  osd-pause)  kill -STOP "$(pid_of osd)"; exit 0 ;;
  osd-resume) kill -CONT "$(pid_of osd)"; exit 0 ;;
  start) ;;
  *) echo "one-node.sh: unknown command $cmd" >&2; exit 2 ;;
esac

for tool in ceph-mon ceph-osd ceph ceph-authtool monmaptool rbd uuidgen; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "skipped: $tool not installed (apt-get install ceph-mon ceph-osd ceph-common uuid-runtime)" >&2
    exit 77
  fi
done

D=$(mkdir -p "$D" && cd "$D" && pwd)
# DIR is wiped: only an empty one or one this script made before (marker file)
if [ -n "$(ls -A "$D")" ] && [ ! -f "$D/.one-node" ]; then
  echo "one-node.sh: $D is not empty and was not made by this script; refusing to wipe it" >&2
  exit 2
fi
stop_one osd
stop_one mon
rm -rf "${D:?}"/*
touch "$D/.one-node"
mkdir -p "$D"/{run,log,mon.a,osd.0}
FSID=$(uuidgen)
# Admin sockets are Unix sockets (108 bytes of path at most); none where DIR is too deep
ASOK="$D/run/\$name.\$pid.asok"
[ ${#D} -le 64 ] || ASOK=
cat > "$D/ceph.conf" <<CONF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$PORT
mon initial members = a
public network = 127.0.0.0/8
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $D/\$name.keyring
run dir = $D/run
admin socket = $ASOK
log file = $D/log/\$name.log
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = $((${ONE_NODE_MEMSTORE_MIB:-1024} * 1048576))
mon data = $D/\$name
osd data = $D/\$name
ms bind ipv6 = false
# A client that dies (kill -9) keeps its watch, and so its exclusive lock, until this
# runs out; the default 30 s would make every takeover test wait half a minute.
osd client watch timeout = ${ONE_NODE_WATCH_TIMEOUT:-5}
[osd]
keyring = $D/\$name/keyring
CONF
export CEPH_CONF=$D/ceph.conf
log() { echo "one-node.sh: $*" >&2; }
fail() { log "$*; logs in $D/log"; "$0" stop "$D" || true; exit 1; }

ceph-authtool --create-keyring "$D/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool --create-keyring "$D/client.admin.keyring" --gen-key -n client.admin \
  --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' --cap mds 'allow *' >/dev/null
ceph-authtool "$D/mon.keyring" --import-keyring "$D/client.admin.keyring" >/dev/null
cp "$D/mon.keyring" "$D/mon.a.keyring"
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$PORT]" "$D/monmap" >/dev/null
ceph-mon --mkfs -i a --monmap "$D/monmap" --keyring "$D/mon.keyring" >"$D/log/mon-mkfs.out" 2>&1 \
  || fail "ceph-mon --mkfs failed"
ceph-mon -f -i a >"$D/log/mon.out" 2>&1 &
echo $! > "$D/pid.mon"
up=
W=${ONE_NODE_WAIT_FACTOR:-1}
for _ in $(seq $((60 * W))); do
  if ceph -s --connect-timeout 5 >/dev/null 2>&1; then up=1; break; fi
  kill -0 "$(pid_of mon)" 2>/dev/null || fail "ceph-mon exited (port $PORT in use?)"
  sleep 0.5
done
[ -n "$up" ] || fail "ceph-mon did not answer within $((30 * W)) s"

OSD_UUID=$(uuidgen)
ID=$(ceph osd new "$OSD_UUID")
ceph-osd -i "$ID" --mkfs --mkkey --no-mon-config --osd-uuid "$OSD_UUID" >"$D/log/osd-mkfs.out" 2>&1 \
  || fail "ceph-osd --mkfs failed"
ceph auth add "osd.$ID" osd 'allow *' mon 'allow profile osd' mgr 'allow profile osd' \
  -i "$D/osd.$ID/keyring" >/dev/null 2>&1 || fail "ceph auth add osd.$ID failed"
ceph-osd -f -i "$ID" >"$D/log/osd.out" 2>&1 &
echo $! > "$D/pid.osd"
up=
for _ in $(seq $((120 * W))); do
  if ceph osd stat 2>/dev/null | grep -q '1 up'; then up=1; break; fi
  kill -0 "$(pid_of osd)" 2>/dev/null || fail "ceph-osd exited"
  sleep 0.5
done
[ -n "$up" ] || fail "the OSD did not come up within $((60 * W)) s"
ceph osd pool create rbd 8 8 >/dev/null 2>&1 || fail "pool create failed"
rbd pool init rbd || fail "rbd pool init failed"
# what an appliance server gets: the rbd profile on this pool only
ceph auth get-or-create client.rnbd mon 'profile rbd' osd 'profile rbd pool=rbd' \
  -o "$D/client.rnbd.keyring" >/dev/null 2>&1 || fail "creating client.rnbd failed"
echo "CEPH_CONF=$D/ceph.conf"
echo "CEPH_KEYRING_RNBD=$D/client.rnbd.keyring"
