package io.rnbd.loadgen;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The verification pattern of one block: a 24-byte header (magic, CRC32C, device offset,
 * generation; little-endian) and pseudo-random filler derived from offset and generation.
 * The CRC covers everything after itself, so a flipped bit anywhere, data from another
 * offset (misdirected write) and data from an older write (lost write) all tell apart.
 */
final class BlockPattern {
    static final int MAGIC = 0x56424e52; // "RNBV"
    static final int HEADER = 24;

    private BlockPattern() {
    }

    /** Fills {@code b} (0..limit) with the pattern for {@code offset} at {@code generation}. */
    static void fill(ByteBuffer b, long offset, long generation) {
        ByteBuffer le = b.duplicate().order(ByteOrder.LITTLE_ENDIAN).position(0);
        le.putInt(MAGIC).putInt(0).putLong(offset).putLong(generation);
        long x = offset * 0x9E3779B97F4A7C15L ^ generation * 0xBF58476D1CE4E5B9L ^ 0x94D049BB133111EBL;
        while (le.remaining() >= Long.BYTES) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            le.putLong(x);
        }
        while (le.hasRemaining()) {
            le.put((byte) x);
        }
        b.order(ByteOrder.LITTLE_ENDIAN).putInt(4, crc(b));
    }

    /** Null if {@code b} holds the pattern of {@code offset} at {@code generation}, else what is wrong. */
    static String check(ByteBuffer b, long offset, long generation) {
        ByteBuffer le = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        if (le.getInt(0) != MAGIC) {
            return "offset " + offset + ": no pattern header (expected generation " + generation + ")";
        }
        if (le.getInt(4) != crc(b)) {
            return "offset " + offset + ": checksum mismatch (corrupted data)";
        }
        long at = le.getLong(8);
        if (at != offset) {
            return "offset " + offset + ": holds the block written for offset " + at + " (misdirected write)";
        }
        long gen = le.getLong(16);
        if (gen != generation) {
            return "offset " + offset + ": generation " + gen + ", expected " + generation
                    + (gen < generation ? " (lost or stale write)" : "");
        }
        return null;
    }

    private static int crc(ByteBuffer b) {
        CRC32C crc = new CRC32C();
        crc.update(b.duplicate().position(8).limit(b.limit()));
        return (int) crc.getValue();
    }
}
