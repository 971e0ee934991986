package io.rnbd.rtrs.client.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;

/** The copy of a write's data, which posts make outside the session lock. */
class ClientRequestTest {
    private static ClientRequest write(byte fill) {
        byte[] data = new byte[64];
        Arrays.fill(data, fill);
        return new ClientRequest(true, ByteBuffer.allocate(8), ByteBuffer.wrap(data), e -> { });
    }

    @Test
    void aWritePostedTwiceCopiesOnce() {
        ClientRequest r = write((byte) 7);
        ByteBuffer slot = ByteBuffer.allocate(64);
        r.copyData(slot.duplicate());
        byte[] garbage = new byte[64];
        Arrays.fill(garbage, (byte) 0x55);
        slot.duplicate().put(garbage); // as if the server had been handed the slot meanwhile
        r.copyData(slot.duplicate()); // the failover's post of the same request
        assertArrayEquals(garbage, slot.array(), "the second post found the data placed and copied nothing");
    }

    @Test
    void aPostThatRunsAfterThePermitWentToAnotherRequestCopiesNothing() {
        ClientRequest late = write((byte) 7);
        late.closeCopy(); // completed (its path failed, no other) and its permit released
        ClientRequest next = write((byte) 9);
        ByteBuffer slot = ByteBuffer.allocate(64);
        next.copyData(slot.duplicate());
        late.copyData(slot.duplicate()); // its doorbell runs only now
        byte[] expected = new byte[64];
        Arrays.fill(expected, (byte) 9);
        assertArrayEquals(expected, slot.array(), "the next request's data survives");
    }

    @Test
    void copiesTheWholeWriteWhereTheSlotStarts() {
        ClientRequest r = write((byte) 3);
        ByteBuffer memory = ByteBuffer.allocate(256);
        r.copyData(memory.duplicate().position(128));
        assertEquals(0, memory.get(127));
        assertEquals(3, memory.get(128));
        assertEquals(3, memory.get(191));
        assertEquals(0, memory.get(192));
    }
}
