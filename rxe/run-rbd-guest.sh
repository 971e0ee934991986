#!/bin/bash
# Issue 35, item 2 on the production backend: RbdBackendPathFailureTest in the rxe guest, Ceph
# (one mon, one OSD on memstore, itests/ceph/one-node.sh) started inside the guest from the
# host's binaries, Linux's rnbd-client on an appliance export of an RBD image, a path
# disconnected and a link taken down under fio's verify. Not part of .ci/run: Ceph under TCG
# costs minutes the CI budget has not got (the same logic runs there on dm-delay,
# SlowBackendPathFailureTest). Needs what the guest step needs, plus the host's Ceph (apt-get
# install ceph-mon ceph-osd ceph-common librbd-dev uuid-runtime) before the build, so that
# rnbd-backend-rbd has its librnbd-rbd.so:
#
#   mvn -B -q install -DskipTests -pl bundles/rdma-disni,bundles/rnbd-backend-rbd,rxe/interop -am
#   rxe/run-rbd-guest.sh                 # ~15 min; RXE_KERNEL=newest for 7.x
#
# Env: RXE_WORK, RXE_KERNEL as for rxe/run-rxe-tests.sh. Exit 0 only when the test passed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
for b in ceph-mon ceph-osd rbd uuidgen; do
  command -v "$b" >/dev/null || { echo "FAILED: $b is not installed on the host (the guest runs the host's)"; exit 1; }
done
[ -f "$(dirname "$HERE")/bundles/rnbd-backend-rbd/target/classes/native/librnbd-rbd.so" ] \
  || { echo "FAILED: no librnbd-rbd.so: build rnbd-backend-rbd with librbd-dev installed (see the comment above)"; exit 1; }
RXE_TESTS=io.rnbd.rxe.interop.RbdBackendPathFailureTest RXE_TIMEOUT=${RXE_TIMEOUT:-2400} \
  exec bash "$HERE/run-rxe-tests.sh"
