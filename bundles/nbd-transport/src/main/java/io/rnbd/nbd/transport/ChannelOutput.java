package io.rnbd.nbd.transport;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;

/** Blocking gathering writes that always write everything. */
public final class ChannelOutput {
    private ChannelOutput() {
    }

    public static void writeFully(GatheringByteChannel ch, ByteBuffer[] bufs, int count) throws IOException {
        int first = 0;
        while (first < count) {
            ch.write(bufs, first, count - first);
            while (first < count && !bufs[first].hasRemaining()) {
                first++;
            }
        }
    }

    public static void writeFully(GatheringByteChannel ch, ByteBuffer buf) throws IOException {
        while (buf.hasRemaining()) {
            ch.write(buf);
        }
    }
}
