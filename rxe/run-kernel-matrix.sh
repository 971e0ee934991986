#!/bin/bash
# The guest tests on several Debian kernels (rxe/README.md, "Kernels"): each kernel's image,
# initramfs and Linux's RTRS/RNBD modules prepared one after the other (they share apt state and
# the build chroot), then the guests booted, up to RXE_PARALLEL at a time, each with its own
# results (RXE_RUN=<kernel>: RXE_WORK/out-<kernel>/, console-<kernel>.log).
#
#   rxe/run-kernel-matrix.sh [KERNEL...]     KERNEL: stable, backports, trixie, unstable, newest
#                                            (RXE_KERNEL's values); default: stable backports newest
#
# .ci/run runs `rxe/run-kernel-matrix.sh stable newest` (the guests at once); 6.12 (backports) runs
# only here, since three kernels took CI past its 45 minutes (rxe/README.md).
#
# Env: RXE_PARALLEL  guests at once (default 3: each TCG guest with thread=single keeps about one
#                    host core busy, and three on two cores finish sooner than two and then one;
#                    lowered to what the host's available memory holds at MEM per guest,
#                    lib/guest-slots.sh); everything else as for run-rxe-tests.sh (RXE_WORK,
#                    RXE_TESTS, RXE_TIMEOUT, MEM, ...), the same for every kernel
#
# Prints one block per kernel (the guest run's per-class lines) and a closing table; writes the
# table to RXE_WORK/matrix.md. Exit 0 when every kernel passed; else the first kernel's non-zero
# exit code in the order given (1 failed, 3 kernel oops, 99 no result, 77 skipped).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${RXE_WORK:-${TMPDIR:-/tmp}/rnbd-rxe}
export RXE_WORK=$WORK
KERNELS=("$@")
[ ${#KERNELS[@]} -gt 0 ] || KERNELS=(stable backports newest)
PARALLEL=$(bash "$HERE/lib/guest-slots.sh" "${RXE_PARALLEL:-3}" "${MEM:-4G}") || exit 1
mkdir -p "$WORK" || { echo "skipped: cannot create $WORK"; exit 77; }
T00=$(date +%s)
stamp() { echo "MATRIX[+$(( $(date +%s) - T00 ))s] $*"; }
declare -A RC SECS KV

for k in "${KERNELS[@]}"; do
  stamp "prepare $k"
  t=$(date +%s)
  RXE_KERNEL=$k bash "$HERE/run-rxe-tests.sh" --prepare >"$WORK/matrix-prepare-$k.log" 2>&1
  r=$?
  sed 's/^/  /' "$WORK/matrix-prepare-$k.log" | grep -E 'FAILED|skipped|prepared|built in|chroot|kernel ' 
  stamp "prepare $k rc=$r ($(( $(date +%s) - t ))s)"
  [ $r = 0 ] || RC[$k]=$r
  KV[$k]=$(sed -n 's/.*prepared \([^ ]*\) (\([^)]*\)).*/\1 \2/p' "$WORK/matrix-prepare-$k.log")
done

running=()
run_one() {
  local k=$1 t
  t=$(date +%s)
  RXE_KERNEL=$k RXE_RUN=$k bash "$HERE/run-rxe-tests.sh" >"$WORK/matrix-$k.log" 2>&1
  local r=$?
  echo "$r $(( $(date +%s) - t ))" > "$WORK/matrix-$k.rc"
}
for k in "${KERNELS[@]}"; do
  [ -z "${RC[$k]:-}" ] || continue
  while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n; done
  stamp "boot $k (${KV[$k]}; log $WORK/matrix-$k.log)"
  rm -f "$WORK/matrix-$k.rc"
  run_one "$k" &
  running+=("$k")
done
wait
for k in "${running[@]}"; do
  read -r RC[$k] SECS[$k] < "$WORK/matrix-$k.rc" 2>/dev/null || RC[$k]=99
done

rc=0
{
  echo "| kernel | RXE_KERNEL | result | guest run |"
  echo "|---|---|---|---|"
  for k in "${KERNELS[@]}"; do
    tests=$(grep -E '^RXE: .*tests (successful|failed)' "$WORK/matrix-$k.log" 2>/dev/null | sed -E 's/^RXE: *\[? *//; s/ *\]$//' | paste -sd, | sed 's/,/, /g')
    echo "| ${KV[$k]:-?} | $k | rc=${RC[$k]}${tests:+: $tests} | ${SECS[$k]:-?} s |"
  done
  echo
  # every test of every kernel, one row per test, one column per kernel: docs/interop.md's matrix
  python3 - "$WORK" "${KERNELS[@]}" <<'PY'
import glob, os, re, sys, xml.etree.ElementTree as ET
work, kernels = sys.argv[1], sys.argv[2:]
res = {}
for k in kernels:
    for x in glob.glob(os.path.join(work, "out-" + k, "reports", "TEST-*.xml")):
        for tc in ET.parse(x).getroot().iter("testcase"):
            cls = tc.get("classname", "").rsplit(".", 1)[-1]
            name = re.sub(r"\(\)$", "", tc.get("name", ""))
            r = "pass"
            if tc.find("failure") is not None or tc.find("error") is not None:
                r = "**FAIL**"
            elif tc.find("skipped") is not None:
                r = "skip"
            res.setdefault((cls, name), {})[k] = r
print("| test | " + " | ".join(kernels) + " |")
print("|---|" + "---|" * len(kernels))
for (cls, name) in sorted(res):
    print("| `%s.%s` | %s |" % (cls, name, " | ".join(res[(cls, name)].get(k, "-") for k in kernels)))
PY
} > "$WORK/matrix.md"
for k in "${KERNELS[@]}"; do
  echo "=== $k (${KV[$k]:-not prepared}): rc=${RC[$k]} after ${SECS[$k]:-?} s"
  grep -E '^RXE: ' "$WORK/matrix-$k.log" 2>/dev/null | grep -vE 'resolve-kernel|linux-rtrs' | sed 's/^RXE: /  /'
  grep -E '^(FAILED|skipped)' "$WORK/matrix-$k.log" "$WORK/matrix-prepare-$k.log" 2>/dev/null | sed 's/^/  /'
  [ "$rc" = 0 ] && [ "${RC[$k]}" != 0 ] && rc=${RC[$k]}
done
cat "$WORK/matrix.md"
stamp "done rc=$rc"
exit "$rc"
