package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.RtrsServerOps;
import io.rnbd.rtrs.api.RtrsServerRequest;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Predicate;

/**
 * A test upper layer: a byte array "disk"; the user header is {u64 offset}. Writes can be
 * held back (to play a slow server) and are logged in the order they land.
 */
final class MemoryOps implements RtrsServerOps {
    final byte[] disk;
    /** {offset, first 8 data bytes (the test's version stamp)} of every write, in landing order. */
    final List<long[]> landed = new ArrayList<>();
    final ConcurrentLinkedQueue<RtrsServerRequest> held = new ConcurrentLinkedQueue<>();
    volatile Predicate<RtrsServerRequest> hold = r -> false;

    MemoryOps(int size) {
        disk = new byte[size];
    }

    static ByteBuffer hdr(long offset) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, offset);
    }

    static long offset(RtrsServerRequest r) {
        return r.userHeader().order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    }

    @Override
    public void onRequest(RtrsServerRequest r) {
        if (r.userHeader().remaining() != 8) {
            r.complete(Errno.EINVAL);
            return;
        }
        if (hold.test(r)) {
            held.add(r);
            return;
        }
        serve(r);
    }

    void serve(RtrsServerRequest r) {
        long off = offset(r);
        ByteBuffer d = r.data();
        if (off < 0 || off + d.remaining() > disk.length) {
            r.complete(Errno.ERANGE);
            return;
        }
        synchronized (this) {
            if (r.isWrite()) {
                long stamp = d.remaining() >= 8 ? d.order(ByteOrder.LITTLE_ENDIAN).getLong(d.position()) : -1;
                d.get(disk, (int) off, d.remaining());
                landed.add(new long[] {off, stamp});
            } else {
                d.put(disk, (int) off, d.remaining());
            }
        }
        r.complete(0);
    }

    void releaseHeld() {
        RtrsServerRequest r;
        while ((r = held.poll()) != null) {
            serve(r);
        }
    }
}
