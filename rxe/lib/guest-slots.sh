#!/bin/bash
# How many rxe guests run-kernel-matrix.sh boots at once: the number asked for, lowered to as
# many as the host's available memory holds at the guest's size (QEMU's -m, which a guest
# fills over a run: brd disks, page cache, its JVMs), never below one. CPU is not the limit:
# three single-threaded TCG guests on two cores finish sooner than two and then one
# (rxe/README.md, "Timings of the kernel matrix").
#
#   guest-slots.sh REQUESTED MEM [MEMINFO]     MEM as QEMU's -m takes it: 4G, 4096M, 4096 (MiB)
#                                              MEMINFO: default /proc/meminfo (tests pass their own)
#
# Prints the number on stdout; says why on stderr when it is lower than asked. Exit 2 on
# input it cannot read.
set -u
req=${1:-}
mem=${2:-}
meminfo=${3:-/proc/meminfo}
case "$req" in ''|*[!0-9]*) echo "guest-slots: guests at once must be a positive number: '$req'" >&2; exit 2 ;; esac
[ "$req" -ge 1 ] || { echo "guest-slots: guests at once must be at least 1: '$req'" >&2; exit 2; }
case "$mem" in
  *[Gg]) n=${mem%[Gg]}; unit=$((1024 * 1024)) ;;
  *[Mm]) n=${mem%[Mm]}; unit=1024 ;;
  *)     n=$mem; unit=1024 ;;   # QEMU reads a bare number as MiB
esac
case "$n" in ''|*[!0-9]*) echo "guest-slots: guest memory must be like 4G, 4096M or 4096: '$mem'" >&2; exit 2 ;; esac
need_kb=$(( n * unit ))
[ "$need_kb" -gt 0 ] || { echo "guest-slots: guest memory must be above zero: '$mem'" >&2; exit 2; }
avail_kb=$(awk '$1 == "MemAvailable:" { print $2 }' "$meminfo" 2>/dev/null)
case "$avail_kb" in
  ''|*[!0-9]*)
    # no reading (an old kernel, no /proc): boot what was asked, as before this rule
    echo "guest-slots: no MemAvailable in $meminfo; booting $req at once" >&2
    echo "$req"; exit 0 ;;
esac
fit=$(( avail_kb / need_kb ))
[ "$fit" -ge 1 ] || fit=1
if [ "$fit" -lt "$req" ]; then
  echo "guest-slots: $fit guest(s) at once, not $req: $(( avail_kb / 1024 )) MiB available, $mem per guest" >&2
  echo "$fit"
else
  echo "$req"
fi
