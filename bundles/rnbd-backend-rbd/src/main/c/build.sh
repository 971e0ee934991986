#!/bin/sh
# Builds librnbd-rbd.so (the JNI half of rnbd-backend-rbd) with gcc against librbd/librados.
# Usage: build.sh JAVA_HOME OUT_DIR
# Skips (exit 0, message) when the Ceph headers are missing, so a build machine without
# librbd-dev/librados-dev still builds the Java bundle; the backend then stays dormant and
# says why.
set -eu
JH=${1:?java home}
OUT=${2:?output dir}
SRC=$(dirname "$0")/rbd_native.c
for h in /usr/include/rbd/librbd.h /usr/include/rados/librados.h; do
  if [ ! -f "$h" ]; then
    echo "librnbd-rbd: skipped: $h missing (apt-get install librbd-dev librados-dev)"
    exit 0
  fi
done
[ -f "$JH/include/jni.h" ] || JH=$(dirname "$JH")   # java.home may be the JRE inside a JDK
mkdir -p "$OUT"
${CC:-gcc} -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror -fPIC -shared \
  -I"$JH/include" -I"$JH/include/linux" -o "$OUT/librnbd-rbd.so" "$SRC" -lrbd -lrados -lpthread
echo "librnbd-rbd: built $OUT/librnbd-rbd.so"
