#!/bin/bash
# Tiny initramfs: static busybox + the modules to mount the host's root fs over
# virtio-9p (read-only) with a tmpfs overlay, then switch_root into it and exec the
# script named by guest_init= on the kernel command line.
# Usage: build-initramfs.sh KROOT OUT.cpio.gz   (KROOT: dpkg -x of linux-image-*-amd64)
set -euo pipefail
KROOT=${1:?kroot}
OUT=${2:?out}
KVER=$(ls "$KROOT/lib/modules" | head -1)
MD="$KROOT/lib/modules/$KVER"
[ -f "$MD/modules.dep" ] || depmod -b "$KROOT" "$KVER"

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W"/{bin,dev,proc,sys,ro,rw,newroot,mods}
cp /bin/busybox "$W/bin/busybox"

MODS="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci
      netfs fscache 9pnet 9pnet_virtio 9p overlay"
i=0
for m in $MODS; do
  f=$(grep -E "(^|/)$m\.ko(\.xz|\.zst)?:" "$MD/modules.dep" | cut -d: -f1 || true)
  if [ -z "$f" ]; then
    # built into this kernel (or absent): the init's insmod loop just has one less
    continue
  fi
  i=$((i+1))
  case "$f" in
    *.xz)  xz -dc "$MD/$f" > "$W/mods/$(printf %02d $i)-$m.ko" ;;
    *.zst) zstd -qdc "$MD/$f" > "$W/mods/$(printf %02d $i)-$m.ko" ;;
    *)     cp "$MD/$f" "$W/mods/$(printf %02d $i)-$m.ko" ;;
  esac
done

cat > "$W/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in /mods/*.ko; do [ -f "$m" ] && { insmod "$m" || echo "insmod $m failed"; }; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /ro || { echo "9p mount failed"; poweroff -f; }
mount -t tmpfs -o size=75% tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/ro,upperdir=/rw/upper,workdir=/rw/work /newroot || { echo "overlay failed"; poweroff -f; }
GI=$(sed -n 's/.*guest_init=\([^ ]*\).*/\1/p' /proc/cmdline)
[ -n "$GI" ] || GI=/bin/sh
for d in proc sys dev; do mount --move /$d /newroot/$d; done
exec switch_root /newroot "$GI"
INIT
chmod +x "$W/init"
(cd "$W" && find . | cpio -o -H newc --quiet | gzip -1) > "$OUT"
