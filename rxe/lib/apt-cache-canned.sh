#!/bin/bash
# A stand-in for apt-cache that answers the two queries resolve-kernel.sh makes from files:
# an archive frozen on the day it was recorded, so that the rule that picks the guest's
# kernel set is tested without the network (KernelSetResolverTest).
#
#   CANNED_DIR/madison/PKG            the output of `apt-cache madison PKG`
#   CANNED_DIR/show/PKG=VERSION       the output of `apt-cache show PKG=VERSION`
#
# A query with no file answers nothing, as apt-cache does for a package or version the
# archive does not have. CANNED_RECORD=1 asks the real apt-cache (APT_CONFIG honoured) and
# keeps its answer, to record an archive as it is today:
#
#   CANNED_RECORD=1 CANNED_DIR=DIR APT_CACHE=rxe/lib/apt-cache-canned.sh rxe/lib/resolve-kernel.sh --all
set -u
: "${CANNED_DIR:?CANNED_DIR: the recorded archive}"
verb=${1:-}
shift || true
answer() {   # answer KIND KEY REAL-ARGS...
  local f=$CANNED_DIR/$1/$2
  shift 2
  if [ "${CANNED_RECORD:-0}" = 1 ]; then
    mkdir -p "$(dirname "$f")"
    apt-cache "$@" 2>/dev/null > "$f.tmp"
    if [ -s "$f.tmp" ]; then mv "$f.tmp" "$f"; else rm -f "$f.tmp"; fi
  fi
  [ -f "$f" ] && cat "$f"
  return 0
}
case "$verb" in
  madison) for p in "$@"; do answer madison "$p" madison "$p"; done ;;
  show)    for pv in "$@"; do answer show "$pv" show "$pv"; done ;;
  *) echo "apt-cache-canned.sh: only madison and show are canned, not '$verb'" >&2; exit 100 ;;
esac
