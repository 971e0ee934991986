#!/bin/sh
# Builds libdisni.so (DiSNI's JNI half, our own implementation) with gcc.
# Usage: build.sh JAVA_HOME OUT_DIR
# Skips (exit 0, message) when the rdma-core headers are missing, so a build machine
# without libibverbs-dev/librdmacm-dev still builds the Java bundle.
set -eu
JH=${1:?java home}
OUT=${2:?output dir}
SRC=$(dirname "$0")/disni_native.c
for h in /usr/include/infiniband/verbs.h /usr/include/rdma/rdma_cma.h; do
  if [ ! -f "$h" ]; then
    echo "libdisni: skipped: $h missing (apt-get install libibverbs-dev librdmacm-dev)"
    exit 0
  fi
done
[ -f "$JH/include/jni.h" ] || JH=$(dirname "$JH")   # java.home may be the JRE inside a JDK
mkdir -p "$OUT"
${CC:-gcc} -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror -fPIC -shared \
  -I"$JH/include" -I"$JH/include/linux" -o "$OUT/libdisni.so" "$SRC" -lrdmacm -libverbs
echo "libdisni: built $OUT/libdisni.so"
