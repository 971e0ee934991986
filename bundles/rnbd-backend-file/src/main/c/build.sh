#!/bin/sh
# Builds librnbd-file.so (the JNI half of rnbd-backend-file: fallocate for hole punching and
# zeroing) with gcc. Usage: build.sh JAVA_HOME OUT_DIR
# Skips (exit 0, message) without gcc or the kernel's UAPI headers, so the Java bundle still
# builds; the backend then writes zeros for trim and write-zeroes and says why.
set -eu
JH=${1:?java home}
OUT=${2:?output dir}
SRC=$(dirname "$0")/file_native.c
if ! command -v "${CC:-gcc}" >/dev/null 2>&1; then
  echo "librnbd-file: skipped: no ${CC:-gcc} (apt-get install gcc)"
  exit 0
fi
if [ ! -f /usr/include/linux/falloc.h ]; then
  echo "librnbd-file: skipped: /usr/include/linux/falloc.h missing (apt-get install linux-libc-dev)"
  exit 0
fi
[ -f "$JH/include/jni.h" ] || JH=$(dirname "$JH")   # java.home may be the JRE inside a JDK
mkdir -p "$OUT"
${CC:-gcc} -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror -fPIC -shared \
  -I"$JH/include" -I"$JH/include/linux" -o "$OUT/librnbd-file.so" "$SRC"
echo "librnbd-file: built $OUT/librnbd-file.so"
