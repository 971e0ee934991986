package io.rnbd.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

class BlockPatternTest {
    private static ByteBuffer block(long offset, long gen) {
        ByteBuffer b = ByteBuffer.allocateDirect(4096);
        BlockPattern.fill(b, offset, gen);
        return b;
    }

    @Test
    void headerLayoutIsLittleEndianMagicCrcOffsetGeneration() {
        ByteBuffer b = block(8192, 7).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(0x56424e52, b.getInt(0));
        assertEquals(8192, b.getLong(8));
        assertEquals(7, b.getLong(16));
        assertEquals((byte) 'R', b.get(0));
    }

    @Test
    void aFilledBlockChecksOut() {
        assertNull(BlockPattern.check(block(8192, 7), 8192, 7));
        ByteBuffer odd = ByteBuffer.allocate(512 + 4);
        BlockPattern.fill(odd, 0, 1);
        assertNull(BlockPattern.check(odd, 0, 1));
    }

    @Test
    void everyFlippedByteIsACorruption() {
        for (int at : new int[] {8, 12, 16, 24, 100, 4095}) {
            ByteBuffer b = block(4096, 3);
            b.put(at, (byte) (b.get(at) ^ 1));
            String problem = BlockPattern.check(b, 4096, 3);
            assertEquals("offset 4096: checksum mismatch (corrupted data)", problem, "byte " + at);
        }
    }

    @Test
    void misdirectedStaleAndMissingBlocksAreToldApart() {
        assertEquals("offset 4096: holds the block written for offset 8192 (misdirected write)",
                BlockPattern.check(block(8192, 3), 4096, 3));
        assertEquals("offset 4096: generation 2, expected 3 (lost or stale write)",
                BlockPattern.check(block(4096, 2), 4096, 3));
        assertEquals("offset 4096: no pattern header (expected generation 3)",
                BlockPattern.check(ByteBuffer.allocate(4096), 4096, 3));
    }
}
