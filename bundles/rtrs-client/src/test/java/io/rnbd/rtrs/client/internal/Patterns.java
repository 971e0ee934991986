package io.rnbd.rtrs.client.internal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;
import java.util.zip.CRC32;

/** Test data: {u64 stamp} then bytes derived from (block, stamp), so any mix-up shows. */
final class Patterns {
    private Patterns() {
    }

    static ByteBuffer block(int block, long stamp, int len) {
        ByteBuffer b = ByteBuffer.allocate(len).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(0, stamp);
        SplittableRandom r = new SplittableRandom(block * 1_000_003L + stamp);
        for (int i = 8; i < len; i++) {
            b.put(i, (byte) r.nextInt(256));
        }
        return b;
    }

    static long crc(ByteBuffer b) {
        CRC32 c = new CRC32();
        c.update(b.duplicate().clear());
        return c.getValue();
    }
}
