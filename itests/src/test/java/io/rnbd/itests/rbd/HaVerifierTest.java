package io.rnbd.itests.rbd;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.rnbd.rnbd.api.BlockDevice;
import io.rnbd.rnbd.api.Capabilities;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.Test;

/** The verifier RbdHaIT relies on, on a device in memory: it passes a good device and catches a stale write. */
public class HaVerifierTest {
    @Test
    public void aGoodDeviceVerifiesCleanAndReadsBack() throws Exception {
        Mem dev = new Mem(24 << 20, null);
        HaVerifier v = new HaVerifier(dev, 4 << 20, 16 << 20, 16);
        v.start(1);
        assertTrue(v.summary(), v.progresses(2000, 30_000));
        v.stop();
        assertEquals(0, v.verifyAll());
        assertEquals(v.summary(), 0, v.failed() + v.mismatches());
        assertTrue(v.summary(), v.writes() > 100 && v.reads() > 100);
    }

    /** A write acknowledged but dropped, so the older data stays: what a stale write looks like to a reader. */
    @Test
    public void aLostWriteIsAVerifyError() throws Exception {
        AtomicBoolean drop = new AtomicBoolean();
        BlockDevice dev = new Mem(16 << 20, drop);
        HaVerifier v = new HaVerifier(dev, 0, 16 << 20, 16);
        v.start(2);
        assertTrue(v.progresses(500, 30_000));
        drop.set(true);
        assertTrue(v.progresses(500, 30_000));
        v.stop();
        v.verifyAll();
        assertTrue("no verify error: " + v.summary(), v.mismatches() > 0);
        assertEquals(0, v.failed());
    }

    /** A device in a byte array; writes vanish (acknowledged all the same) while {@code drop} is set. */
    private static final class Mem implements BlockDevice {
        private final byte[] store;
        private final AtomicBoolean drop;

        Mem(int size, AtomicBoolean drop) {
            this.store = new byte[size];
            this.drop = drop;
        }

        @Override
        public long size() {
            return store.length;
        }

        @Override
        public Capabilities capabilities() {
            return new Capabilities(true, true, true, true, true, true);
        }

        @Override
        public synchronized CompletableFuture<Void> read(long offset, ByteBuffer dst) {
            ByteBuffer d = dst.duplicate();
            d.put(store, (int) offset, d.remaining());
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public synchronized CompletableFuture<Void> write(long offset, ByteBuffer src, boolean fua) {
            if (drop == null || !drop.get()) {
                ByteBuffer s = src.duplicate();
                s.get(store, (int) offset, s.remaining());
            }
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> flush() {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> trim(long offset, long length) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> writeZeroes(long offset, long length, boolean fua) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void close() {
        }
    }
}
