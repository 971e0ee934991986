#!/bin/bash
# Builds Linux's own RTRS and RNBD modules (rtrs-core, rtrs-client, rtrs-server, rnbd-client,
# rnbd-server) out of tree for the guest's kernel and installs them into the guest's module
# tree: the interop peer that nobody in this project wrote. Debian's kernels do not build
# them (# CONFIG_INFINIBAND_RTRS_CLIENT is not set), but their sources are in Debian's
# linux-source-<series> and build in well under a minute against linux-headers-<kver>.
#
#   build-linux-rtrs.sh KROOT KVER CACHE
#
# KROOT  the guest's kernel tree (dpkg -x of linux-image-<kver>); its .deb-version file holds
#        the Debian version of that image and .kernel-set the pieces to build from, as
#        lib/resolve-kernel.sh chose them (run-rxe-tests.sh writes both)
# KVER   the kernel release, e.g. 6.1.0-56-amd64
# CACHE  where the result is kept, keyed by kernel release and Debian version:
#        CACHE/<kver>/<version>/ko/*.ko; a second run with the same kernel does not rebuild
#
# The headers must be the very build of the image the guest boots (same Debian version: they
# carry its .config and Module.symvers); the kbuild tools and the source may be another Debian
# revision of the same upstream version (lib/resolve-kernel.sh has the rule and why). Each is
# fetched with apt-get download at the version .kernel-set names, and the run refuses loudly
# when what arrives is another. They are unpacked with dpkg -x under CACHE, not installed:
# installing linux-headers-<kver> would pull the image onto the host (backports' headers
# depend on it) and could not serve two kernels side by side. apt-get honours APT_CONFIG, so
# the caller can point it at another suite (RXE_KERNEL=backports). The built modules must
# carry the vermagic of the image's own rdma_rxe.ko, or they are not installed.
#
# Exit 0: modules installed in KROOT/lib/modules/<kver>/updates/linux-rtrs (depmod run).
# Exit 1: with a line starting "linux-rtrs: FAILED" that says why.
set -uo pipefail
KROOT=${1:?usage: build-linux-rtrs.sh KROOT KVER CACHE}
KVER=${2:?kernel release}
CACHE=${3:?cache directory}
T0=$(date +%s)
say() { echo "linux-rtrs: $*"; }
fail() { say "FAILED: $*"; exit 1; }
MODULES="rtrs/rtrs-core rtrs/rtrs-client rtrs/rtrs-server rnbd/rnbd-client rnbd/rnbd-server"

DEBVER=$(cat "$KROOT/.deb-version" 2>/dev/null) || fail "$KROOT/.deb-version missing (which build of linux-image-$KVER is this?)"
[ -n "$DEBVER" ] || fail "empty $KROOT/.deb-version"
[ -f "$KROOT/.kernel-set" ] || fail "$KROOT/.kernel-set missing (run-rxe-tests.sh writes it from lib/resolve-kernel.sh)"
# shellcheck disable=SC1091
. "$KROOT/.kernel-set"
[ "$IMGVER" = "$DEBVER" ] || fail "$KROOT holds linux-image-$KVER $DEBVER, its kernel set says $IMGVER"
for v in HEADERS COMMON KBUILD KBUILDVER SOURCE SOURCEVER; do
  [ -n "${!v:-}" ] || fail "$KROOT/.kernel-set has no $v"
done
KEY=$CACHE/$KVER/$IMGVER
DEST=$KROOT/lib/modules/$KVER/updates/linux-rtrs
rxe_ko=$(find "$KROOT/lib/modules/$KVER" -name 'rdma_rxe.ko*' | head -1)
[ -n "$rxe_ko" ] || fail "no rdma_rxe module in $KROOT"
want_magic=$(modinfo -F vermagic "$rxe_ko") || fail "cannot read the vermagic of $rxe_ko"

install_modules() {
  mkdir -p "$DEST" || fail "cannot create $DEST"
  local changed=0 m
  for m in $MODULES; do
    cmp -s "$KEY/ko/${m#*/}.ko" "$DEST/${m#*/}.ko" && continue
    cp "$KEY/ko/${m#*/}.ko" "$DEST/" || fail "cannot install ${m#*/}.ko into $DEST"
    changed=1
  done
  # the protocol header they were built from: the interop tests read what this kernel's RNBD
  # speaks from it (LinuxRnbdProto: WRITE_ZEROES, RNBD_F_PREFLUSH, RNBD_F_NOUNMAP)
  cp "$KEY/src/block/rnbd/rnbd-proto.h" "$DEST/" 2>/dev/null || fail "no rnbd-proto.h in $KEY/src"
  if [ $changed = 1 ] || ! grep -q 'updates/linux-rtrs/rnbd-client.ko' "$KROOT/lib/modules/$KVER/modules.dep"; then
    depmod -b "$KROOT" "$KVER" || fail "depmod -b $KROOT $KVER"
  fi
  say "installed in $DEST ($(modinfo -F vermagic "$DEST/rnbd-client.ko"))"
}

# --- cached? --------------------------------------------------------------------------------
complete=1
for m in $MODULES; do [ -f "$KEY/ko/${m#*/}.ko" ] || complete=0; done
if [ $complete = 1 ] && [ "$(modinfo -F vermagic "$KEY/ko/rnbd-client.ko")" = "$want_magic" ]; then
  say "cached for $KVER ($IMGVER) in $KEY"
  install_modules
  exit 0
fi

# --- fetch the exact build's headers, kbuild tools and source ------------------------------
say "building for $KVER ($IMGVER) from $SOURCE $SOURCEVER, $HEADERS $IMGVER and $KBUILD $KBUILDVER"
B=$KEY/build
rm -rf "$B" "$KEY/ko"
mkdir -p "$B/debs" "$B/root" "$B/src" "$KEY/ko" || fail "cannot create $B"
cd "$B/debs" || fail "cd $B/debs"
fetch() {   # fetch NAME VERSION: apt-get download NAME=VERSION, and check what arrived
  local log="$B/apt-download.log"
  if ! apt-get download -q -o APT::Sandbox::User=root "$1=$2" >>"$log" 2>&1; then
    local offered
    offered=$(apt-cache madison "$1" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}' | paste -sd' ')
    fail "$1 $2 cannot be downloaded; apt offers ${offered:-nothing} (see $log)"
  fi
  local got
  got=$(dpkg-deb -f "$1"_*.deb Version)
  [ "$got" = "$2" ] || fail "$1 is $got, the kernel set says $2"
}
fetch "$HEADERS" "$IMGVER"
# the flavour's headers name the common headers and the kbuild tools they were built with
deps=$(dpkg-deb -f "$HEADERS"_*.deb Depends | tr ',' '\n' | sed -E 's/^ *//; s/ .*//')
echo "$deps" | grep -qxF "$COMMON" && echo "$deps" | grep -qxF "$KBUILD" \
  || fail "$HEADERS $IMGVER names $(echo "$deps" | paste -sd' '), not $COMMON and $KBUILD"
kbuild=$KBUILD
fetch "$COMMON" "$IMGVER"
fetch "$KBUILD" "$KBUILDVER"
fetch "$SOURCE" "$SOURCEVER"
series=${SOURCE#linux-source-}

# the build tools kbuild needs (gcc-<n>, make, the kbuild programs' libraries: libelf, libssl, ...).
# Where the host cannot have them (7.x: gcc-16-for-host and kbuild programs linked against a
# newer glibc than bookworm's), the build runs in a chroot of the kernel's own suite
# (lib/build-chroot.sh): BUILD_ROOT is where the build tree is seen from the compiler's side.
kbuild_deps=$(dpkg-deb -f "$kbuild"_*.deb Depends | tr ',' '\n' | sed -E 's/\|.*//; s/^ *//; s/ .*//' | grep -v '^$')
compiler=${COMPILER:-$(echo "$deps" | grep -E '^gcc-[0-9]+$' | head -1)}
tools=(make "${compiler:-gcc}" $kbuild_deps)
CHROOT=""
if env -u APT_CONFIG apt-get install -s -q --no-install-recommends "${tools[@]}" >"$B/host-tools.sim" 2>&1; then
  need=()
  for p in "${tools[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    say "apt-get install ${need[*]}"
    # with the host's own sources (APT_CONFIG may point at a backports-only list)
    env -u APT_CONFIG DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >"$B/apt-install.log" 2>&1 \
      || fail "apt-get install ${need[*]} on the host (see $B/apt-install.log)"
  fi
else
  [ -n "${RXE_SUITES:-}" ] || fail "the host cannot install ${tools[*]} (see $B/host-tools.sim) and no suite to build in is known (RXE_SUITES)"
  say "the host cannot have ${tools[*]} ($(grep -m1 -E 'Depends:|but|E:' "$B/host-tools.sim" | sed 's/^ *//')): building in a chroot of $RXE_SUITES"
  CHROOT=$("$(dirname "$0")/build-chroot.sh" "$(dirname "$CACHE")/chroot" "${tools[@]}") || fail "no build chroot (see above)"
fi
# T: the tree the compiler works in, as the host sees it; TIN: the same tree as make sees it
# (inside the chroot: /build/<kver>)
if [ -n "$CHROOT" ]; then
  TIN=/build/$KVER
  T=$CHROOT$TIN
  rm -rf "$T"
else
  T=$B TIN=$B
fi
mkdir -p "$T/root" "$T/src" || fail "cannot create $T"
for d in "$HEADERS" "$COMMON" "$KBUILD"; do
  dpkg -x "$d"_*.deb "$T/root" || fail "dpkg -x $d"
done
HDR=$TIN/root/usr/src/linux-headers-$KVER
[ -f "$T/root/usr/src/linux-headers-$KVER/Makefile" ] || fail "no $HDR/Makefile"
# The flavour's Makefile includes the common headers' Makefile by absolute path (and 7.x names
# itself in KBUILD_OUTPUT=): make both ours.
sed -i -E "s#(^|[[:space:]=])/usr/src/#\1$TIN/root/usr/src/#g" "$T/root/usr/src/linux-headers-$KVER/Makefile"
# Only the two driver directories are needed out of the ~140 MB source tarball.
dpkg-deb --fsys-tarfile "linux-source-$series"_*.deb | tar -xO "./usr/src/linux-source-$series.tar.xz" \
  | xz -dc -T0 | tar -x -C "$T/src" --wildcards \
    "linux-source-$series/drivers/infiniband/ulp/rtrs/*" "linux-source-$series/drivers/block/rnbd/*" \
  || fail "cannot extract rtrs/ and rnbd/ from linux-source-$series"
rm -f "linux-source-$series"_*.deb          # 140 MB; the modules are what is cached

# --- build ---------------------------------------------------------------------------------
mkdir -p "$T/oot"
cp -r "$T/src/linux-source-$series/drivers/infiniband/ulp/rtrs" "$T/oot/rtrs"
cp -r "$T/src/linux-source-$series/drivers/block/rnbd" "$T/oot/rnbd"
# rnbd includes rtrs.h from the kernel tree; out of tree it sits beside it
sed -i 's#-I$(srctree)/drivers/infiniband/ulp/rtrs#-I$(src)/../rtrs#' "$T/oot/rnbd/Makefile"
echo 'obj-m += rtrs/ rnbd/' > "$T/oot/Kbuild"
say "make${CHROOT:+ in $CHROOT} (log $B/make.log)"
run_make() {
  if [ -n "$CHROOT" ]; then
    # objtool reads /proc/self (its stack limit): the chroot needs a /proc while make runs
    mountpoint -q "$CHROOT/proc" || mount -t proc proc "$CHROOT/proc" || fail "mount proc in $CHROOT"
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 chroot "$CHROOT" "$@"
    local r=$?
    umount "$CHROOT/proc" 2>/dev/null
    return $r
  else
    "$@"
  fi
}
# no BTF: test modules need none, and 6.12's headers ship a vmlinux, which would make kbuild run pahole
run_make make -j"$(nproc)" -C "$HDR" M="$TIN/oot" \
  CONFIG_INFINIBAND_RTRS=m CONFIG_INFINIBAND_RTRS_CLIENT=m CONFIG_INFINIBAND_RTRS_SERVER=m \
  CONFIG_BLK_DEV_RNBD=y CONFIG_BLK_DEV_RNBD_CLIENT=m CONFIG_BLK_DEV_RNBD_SERVER=m \
  CONFIG_DEBUG_INFO_BTF_MODULES= modules >"$B/make.log" 2>&1 \
  || { tail -30 "$B/make.log"; fail "make (log $B/make.log)"; }
OOT=$T/oot
for m in $MODULES; do
  [ -f "$OOT/$m.ko" ] || fail "$m.ko was not built (log $B/make.log)"
  strip --strip-debug -o "$KEY/ko/${m#*/}.ko" "$OOT/$m.ko" || fail "strip $m.ko"
done
got_magic=$(modinfo -F vermagic "$KEY/ko/rnbd-client.ko")
if [ "$got_magic" != "$want_magic" ]; then
  rm -rf "$KEY/ko"
  fail "built modules say '$got_magic', the image's rdma_rxe.ko says '$want_magic'"
fi
# what they were built from, beside them
rm -rf "$KEY/src"; cp -r "$T/src/linux-source-$series/drivers" "$KEY/src"
echo "$IMGVER" > "$KEY/ko/deb-version"
cp "$KROOT/.kernel-set" "$KEY/ko/kernel-set"   # the exact pieces they were built from
[ "${RXE_KEEP_BUILD:-0}" = 1 ] || rm -rf "$B" "$T"
say "built in $(( $(date +%s) - T0 ))s: $(cd "$KEY/ko" && ls -- *.ko | tr '\n' ' ')"
install_modules
