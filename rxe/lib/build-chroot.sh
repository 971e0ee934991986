#!/bin/bash
# A Debian chroot of the guest kernel's own suite, for building Linux's RTRS/RNBD modules when
# the host cannot: Debian 7.x kernels' headers name gcc-16-for-host, and their kbuild programs
# (fixdep, modpost) are linked against a newer glibc than the bookworm host has. Installing
# that compiler and glibc on the host is not an option (it would upgrade the machine), so the
# build runs where they belong: a minimal debootstrap of the suite, with only what the build
# needs installed in it, kept under RXE_WORK and reused by every later build.
#
#   build-chroot.sh DIR PACKAGE...
#
# DIR       where chroots are kept: DIR/<suite>/ (the first suite of RXE_SUITES that is a whole
#           distribution: sid for "sid experimental", trixie for "trixie trixie-security")
# PACKAGE   what the build needs (make, the headers' compiler, the kbuild package's Depends)
#
# Env: RXE_SUITES  the kernel's suites (run-rxe-tests.sh: "sid experimental", ...); the chroot's
#                  apt lists are these, so a package only experimental has is found too
#      RXE_MIRROR  the Debian mirror the host already uses (run-rxe-tests.sh finds it)
#
# stdout: the chroot's path (exit 0). Progress and failures on stderr ("build-chroot: ...").
# Only the first run downloads (debootstrap --variant=minbase, about 40 MB, then the tools,
# about 80 MB for gcc-16); later runs refresh the chroot's lists once a day and install what is
# missing. Concurrent runs (guests of two kernels booted in parallel) take turns on a lock.
set -uo pipefail
DIR=${1:?usage: build-chroot.sh DIR PACKAGE...}
shift
say() { echo "build-chroot: $*" >&2; }
fail() { say "FAILED: $*"; exit 1; }
[ "$(id -u)" = 0 ] || fail "debootstrap and chroot need root"
[ -n "${RXE_SUITES:-}" ] || fail "RXE_SUITES is not set"
[ -n "${RXE_MIRROR:-}" ] || fail "RXE_MIRROR is not set"
suite=""
for s in $RXE_SUITES; do
  case "$s" in *-security|*-updates|*-backports|experimental) ;; *) suite=$s; break ;; esac
done
[ -n "$suite" ] || fail "no whole distribution among '$RXE_SUITES' to debootstrap"
command -v debootstrap >/dev/null || {
  say "apt-get install debootstrap"
  env -u APT_CONFIG DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2 \
    || fail "cannot install debootstrap"
}
C=$DIR/$suite
mkdir -p "$DIR" || fail "cannot create $DIR"
exec 9>"$DIR/$suite.lock"
flock 9
if [ ! -f "$C/.complete" ]; then
  rm -rf "$C"
  say "debootstrap --variant=minbase $suite $C (log $DIR/$suite-debootstrap.log)"
  debootstrap --variant=minbase "$suite" "$C" "$RXE_MIRROR" >"$DIR/$suite-debootstrap.log" 2>&1 \
    || { tail -5 "$DIR/$suite-debootstrap.log" >&2; fail "debootstrap $suite (log $DIR/$suite-debootstrap.log)"; }
  touch "$C/.complete"
fi
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
: > "$C/etc/apt/sources.list.new"
for s in $RXE_SUITES; do
  m=$RXE_MIRROR
  case "$s" in *-security) m=${RXE_SECURITY_MIRROR:-${RXE_MIRROR%/debian}/debian-security} ;; esac
  echo "deb [signed-by=$keyring] $m $s main" >> "$C/etc/apt/sources.list.new"
done
rm -f "$C/etc/apt/sources.list.d/debian.sources"
cmp -s "$C/etc/apt/sources.list.new" "$C/etc/apt/sources.list" || rm -f "$C"/var/lib/apt/lists/*Packages*
mv "$C/etc/apt/sources.list.new" "$C/etc/apt/sources.list"
# the chroot reaches the archive as the host does: the host's proxy and its Valid-Until policy
# (a machine whose mirror is a frozen snapshot turns that check off; so must the chroot)
{
  for k in Acquire::Check-Valid-Until Acquire::http::Proxy Acquire::https::Proxy; do
    v=$(env -u APT_CONFIG apt-config dump "$k" 2>/dev/null | sed -n "s/^$k \"\(.*\)\";$/\1/p" | head -1)
    [ -n "$v" ] && echo "$k \"$v\";"
  done
} > "$C/etc/apt/apt.conf.d/00host-acquire"
in_chroot() {
  mountpoint -q "$C/proc" || mount -t proc proc "$C/proc" || fail "mount proc in $C"
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive chroot "$C" "$@"
  local r=$?
  umount "$C/proc" 2>/dev/null
  return $r
}
if [ -z "$(find "$C/var/lib/apt/lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
  say "apt-get update in $C"
  in_chroot apt-get update -q >"$DIR/$suite-apt.log" 2>&1 || fail "apt-get update in $C (log $DIR/$suite-apt.log)"
fi
missing=()
for p in "$@"; do
  in_chroot dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "apt-get install ${missing[*]} in $C"
  in_chroot apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$DIR/$suite-apt.log" 2>&1 \
    || { tail -5 "$DIR/$suite-apt.log" >&2; fail "apt-get install ${missing[*]} in $C (log $DIR/$suite-apt.log)"; }
  in_chroot apt-get clean >/dev/null 2>&1
fi
echo "$C"
