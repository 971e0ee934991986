#!/bin/bash
# Chooses the guest's kernel set from what the Debian archive offers right now: the image,
# its headers, the kbuild tools and linux-source that Linux's RTRS/RNBD modules are built
# from. The archive moves every few weeks and its pieces do not move together (the security
# archive once served linux-kbuild-6.1 at 6.1.192-3 beside the image and headers at
# 6.1.192-2), so the rule says what must match and what may differ:
#
#   image    the newest version of the metapackage (linux-image-amd64) whose set is complete:
#            the image it names must be in the archive at that version, and so must the parts
#            a 7.x image package names at its own version (linux-binary-*, linux-modules-*)
#   headers  linux-headers-<kver> and the -common package it names: exactly the image's
#            version. They carry the kernel's .config and Module.symvers, i.e. the vermagic
#            and the module ABI (modversions CRCs), which is what a module must match.
#   kbuild   the package the headers name (linux-kbuild-6.1, linux-kbuild-7.2.13+deb14):
#            a version satisfying the headers' own Depends relation and of the same
#            upstream version; the image's own revision when offered, else the newest.
#            Its programs (fixdep, modpost, genksyms) run on the build host; they never end
#            up in a module.
#   source   linux-source-<major.minor>: the same upstream version; the image's own
#            revision when offered, else the newest. Only drivers/infiniband/ulp/rtrs and
#            drivers/block/rnbd are taken from it.
#
# A candidate missing any piece is passed over (with its reason on stderr) for the next
# older one, so a metapackage naming an image that is not in the archive yet, or a source
# package dropped before its image, falls back to the newest complete set instead of
# failing. The vermagic check after the build (build-linux-rtrs.sh) still guards all of this.
#
#   resolve-kernel.sh [--all] [META]      META default linux-image-amd64
#
# --all evaluates every candidate instead of stopping at the first complete one (each
# complete set printed after a "# META VERSION" line): to see the choices, and to record an
# archive's answers for the test (CANNED_RECORD=1, rxe/lib/apt-cache-canned.sh).
#
# stdout, on success (exit 0), shell-sourceable:
#   KPKG=linux-image-6.1.0-56-amd64  KVER=6.1.0-56-amd64  IMGVER=6.1.192-2
#   IMGPARTS=''               7.x: 'linux-base-7.3-amd64 linux-binary-7.3-amd64 linux-modules-7.3-amd64',
#                             what the (empty) image package names at its own version: modules.builtin and
#                             modules.order, vmlinuz, the modules
#   HEADERS=linux-headers-6.1.0-56-amd64  COMMON=linux-headers-6.1.0-56-common  (both at IMGVER)
#   KBUILD=linux-kbuild-6.1  KBUILDVER=6.1.192-3
#   SOURCE=linux-source-6.1  SOURCEVER=6.1.192-2
#   COMPILER=gcc-12          the compiler package the headers name (gcc-N or gcc-N-for-host)
# stderr: one "resolve-kernel: ..." line per candidate passed over and per piece taken at
# another revision than the image's. Exit 1: "resolve-kernel: FAILED: ..." with every reason.
#
# Every archive query goes through $APT_CACHE (default apt-cache; APT_CONFIG is honoured),
# only as `madison PKG` and `show PKG=VERSION`, so that a test can answer from canned output
# (rxe/lib/apt-cache-canned.sh, KernelSetResolverTest). Versions are compared with
# dpkg --compare-versions.
set -uo pipefail
ALL=0
[ "${1:-}" = --all ] && { ALL=1; shift; }
META=${1:-linux-image-amd64}
APT_CACHE=${APT_CACHE:-apt-cache}
say() { echo "resolve-kernel: $*" >&2; }

# versions of PKG in the archive (binary packages only), newest first, one per line
versions() {
  # shellcheck disable=SC2086
  $APT_CACHE madison "$1" 2>/dev/null | awk -F'|' '$3 ~ /Packages[[:space:]]*$/ { gsub(/[[:space:]]/, "", $2); print $2 }' \
    | sort -u | sort_newest_first
}
sort_newest_first() {
  local vs=() v out=() i j
  while read -r v; do [ -n "$v" ] && vs+=("$v"); done
  # insertion sort with dpkg's ordering (a handful of versions)
  for v in "${vs[@]}"; do
    i=${#out[@]}
    out+=("$v")
    while [ "$i" -gt 0 ] && dpkg --compare-versions "${out[$((i-1))]}" lt "$v"; do
      out[i]=${out[$((i-1))]}; i=$((i-1))
    done
    out[i]=$v
  done
  [ ${#out[@]} -eq 0 ] || printf '%s\n' "${out[@]}"
}
has_version() { versions "$1" | grep -qxF "$2"; }
# the Depends field of PKG=VERSION, one relation per line ("name (op version)"; the first of
# an alternative)
depends() {
  # shellcheck disable=SC2086
  $APT_CACHE show "$1=$2" 2>/dev/null | awk '/^Depends:/ { sub(/^Depends:[[:space:]]*/, ""); print; exit }' \
    | tr ',' '\n' | sed -E 's/\|.*//; s/^[[:space:]]+//; s/[[:space:]]+$//' | grep -v '^$'
}
dep_name() { sed -E 's/[[:space:]]*\(.*//'; }
upstream() { local v=${1#*:}; echo "${v%-*}"; }    # 6.1.192-3 -> 6.1.192, 7.3~rc7-1~exp1 -> 7.3~rc7
# series of an upstream version: 6.1.192 -> 6.1, 6.12.95 -> 6.12, 7.3~rc7 -> 7.3
series() { echo "$1" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/'; }
# satisfies VERSION "RELATION": RELATION is "(>= 6.1.192-2)", "(= 7.2.13-1)" or empty
satisfies() {
  local v=$1 rel=$2 op want
  [ -z "$rel" ] && return 0
  op=$(echo "$rel" | sed -E 's/^\(([<>=]+)[[:space:]]*.*$/\1/')
  want=$(echo "$rel" | sed -E 's/^\([<>=]+[[:space:]]*([^)]*)\)$/\1/')
  case "$op" in
    '>=') dpkg --compare-versions "$v" ge "$want" ;;
    '<=') dpkg --compare-versions "$v" le "$want" ;;
    '>>') dpkg --compare-versions "$v" gt "$want" ;;
    '<<') dpkg --compare-versions "$v" lt "$want" ;;
    '=')  dpkg --compare-versions "$v" eq "$want" ;;
    *) return 1 ;;
  esac
}
# pick PKG UP IMGVER RELATION: the image's own revision if offered, else the newest version of
# upstream UP that satisfies RELATION
pick() {
  local pkg=$1 up=$2 own=$3 rel=$4 v best=""
  while read -r v; do
    [ "$(upstream "$v")" = "$up" ] || continue
    satisfies "$v" "$rel" || continue
    [ "$v" = "$own" ] && { echo "$v"; return 0; }
    [ -z "$best" ] && best=$v
  done < <(versions "$pkg")
  [ -n "$best" ] && echo "$best"
}

metas=$(versions "$META")
[ -n "$metas" ] || { say "FAILED: $META is not in the archive (apt-get update needed?)"; exit 1; }
reasons=()
while read -r M; do
  # the image the metapackage names, at the version the relation gives (the metapackage's own
  # version when it gives none, as Debian's linux-signed-* metapackages do)
  rel=$(depends "$META" "$M" | grep -E '^linux-image-' | head -1)
  KPKG=$(echo "$rel" | dep_name)
  [ -n "$KPKG" ] || { reasons+=("$META $M names no linux-image package"); say "pass over $META $M: names no image"; continue; }
  IMGVER=$(echo "$rel" | sed -nE 's/.*\(= *([^)]*)\).*/\1/p')
  [ -n "$IMGVER" ] || IMGVER=$M
  KVER=${KPKG#linux-image-}
  why="" IMGPARTS=""
  if ! has_version "$KPKG" "$IMGVER"; then
    why="$KPKG $IMGVER is not in the archive"
  else
    # 7.x splits the image: linux-image-<kver> is empty and names linux-binary-<kver> (vmlinuz),
    # linux-modules-<kver> and linux-base-<kver> (modules.builtin, .order) at its own version: parts
    # of the image, which must be there
    named=$(depends "$KPKG" "$IMGVER" | dep_name)
    for part in "linux-base-$KVER" "linux-binary-$KVER" "linux-modules-$KVER"; do
      echo "$named" | grep -qxF "$part" || continue
      if has_version "$part" "$IMGVER"; then
        IMGPARTS="${IMGPARTS:+$IMGPARTS }$part"
      else
        why="$part $IMGVER (a part of $KPKG) is not in the archive"
      fi
    done
  fi
  HEADERS=linux-headers-$KVER
  if [ -z "$why" ] && ! has_version "$HEADERS" "$IMGVER"; then
    why="$HEADERS $IMGVER is not in the archive (offered: $(versions "$HEADERS" | paste -sd' ' | sed 's/^$/nothing/'))"
  fi
  COMMON="" KBUILD="" KBUILDVER="" SOURCE="" SOURCEVER="" COMPILER=""
  if [ -z "$why" ]; then
    hdeps=$(depends "$HEADERS" "$IMGVER")
    COMMON=$(echo "$hdeps" | dep_name | grep -E '^linux-headers-.*-common$' | head -1)
    krel=$(echo "$hdeps" | grep -E '^linux-kbuild-' | head -1)
    KBUILD=$(echo "$krel" | dep_name)
    kcons=$(echo "$krel" | sed -nE 's/^[^(]*(\(.*\))$/\1/p')
    COMPILER=$(echo "$hdeps" | dep_name | grep -E '^gcc-[0-9]+(-for-host)?$' | head -1)
    if [ -z "$COMPILER" ]; then   # bookworm: linux-compiler-gcc-12-x86 stands for gcc-12
      COMPILER=$(echo "$hdeps" | dep_name | sed -nE 's/^linux-compiler-(gcc-[0-9]+)-.*/\1/p' | head -1)
    fi
    if [ -z "$COMMON" ] || [ -z "$KBUILD" ]; then
      why="$HEADERS $IMGVER names no common headers or kbuild package"
    elif ! has_version "$COMMON" "$IMGVER"; then
      why="$COMMON $IMGVER is not in the archive (offered: $(versions "$COMMON" | paste -sd' ' | sed 's/^$/nothing/'))"
    fi
  fi
  up=$(upstream "$IMGVER")
  if [ -z "$why" ]; then
    KBUILDVER=$(pick "$KBUILD" "$up" "$IMGVER" "$kcons")
    [ -n "$KBUILDVER" ] || why="no $KBUILD of upstream $up${kcons:+ satisfying $kcons} (offered: $(versions "$KBUILD" | paste -sd' ' | sed 's/^$/nothing/'))"
  fi
  if [ -z "$why" ]; then
    SOURCE=linux-source-$(series "$up")
    SOURCEVER=$(pick "$SOURCE" "$up" "$IMGVER" "")
    [ -n "$SOURCEVER" ] || why="no $SOURCE of upstream $up (offered: $(versions "$SOURCE" | paste -sd' ' | sed 's/^$/nothing/'))"
  fi
  if [ -n "$why" ]; then
    reasons+=("$META $M: $why")
    say "pass over $META $M: $why"
    continue
  fi
  [ "$KBUILDVER" = "$IMGVER" ] || say "$KBUILD at $KBUILDVER (the image is $IMGVER: same upstream version, host tools only)"
  [ "$SOURCEVER" = "$IMGVER" ] || say "$SOURCE at $SOURCEVER (the image is $IMGVER: same upstream version)"
  [ $ALL = 0 ] || echo "# $META $M"
  printf '%s=%q\n' KPKG "$KPKG" KVER "$KVER" IMGVER "$IMGVER" IMGPARTS "$IMGPARTS" HEADERS "$HEADERS" COMMON "$COMMON" \
    KBUILD "$KBUILD" KBUILDVER "$KBUILDVER" SOURCE "$SOURCE" SOURCEVER "$SOURCEVER" COMPILER "$COMPILER"
  [ $ALL = 1 ] || exit 0
  found=1
done <<< "$metas"
[ "${found:-0}" = 1 ] && exit 0
say "FAILED: no version of $META has a complete kernel set in the archive:"
for r in "${reasons[@]}"; do say "  $r"; done
exit 1
