package io.rnbd.nbd.gateway.internal;

import java.io.EOFException;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A connection's in-flight budget, as rtrs's permits bound a session's: a request takes a
 * slot ({@link NbdServerConfig#maxInflight()} of them) and its payload's bytes
 * ({@link NbdServerConfig#maxInflightBytes()}, counted in 512-byte units) before its payload
 * is read or the device runs it, and gives both back once its reply is written. So a client
 * that pipelines without reading its replies cannot pin the shared buffer pool.
 */
final class Permits {
    private static final int BYTE_UNIT = 512;

    private final int maxSlots;
    private final Semaphore slots;
    private final Semaphore bytes;

    Permits(int maxInflight, long maxInflightBytes) {
        this.maxSlots = maxInflight;
        this.slots = new Semaphore(maxInflight);
        this.bytes = new Semaphore((int) (maxInflightBytes / BYTE_UNIT));
    }

    /** A slot and {@code payload} bytes if both are free now; nothing taken otherwise. */
    boolean tryAcquire(long payload) {
        int permits = byteUnits(payload);
        if (slots.tryAcquire()) {
            if (permits == 0 || bytes.tryAcquire(permits)) {
                return true;
            }
            slots.release();
        }
        return false;
    }

    /**
     * Waits for a slot, then for {@code payload} bytes, looking every 100 ms whether the
     * connection is closing.
     *
     * @throws EOFException once {@code closing} holds, with nothing taken
     */
    void acquire(long payload, BooleanSupplier closing) throws InterruptedException, EOFException {
        int permits = byteUnits(payload);
        while (!slots.tryAcquire(100, TimeUnit.MILLISECONDS)) {
            if (closing.getAsBoolean()) {
                throw new EOFException("connection closing");
            }
        }
        if (permits > 0) {
            while (!bytes.tryAcquire(permits, 100, TimeUnit.MILLISECONDS)) {
                if (closing.getAsBoolean()) {
                    slots.release();
                    throw new EOFException("connection closing");
                }
            }
        }
    }

    /** Gives back what a request holding {@code payload} bytes took. */
    void release(long payload) {
        int permits = byteUnits(payload);
        if (permits > 0) {
            bytes.release(permits);
        }
        slots.release();
    }

    /** Waits until every slot is back (every reply written); false if {@code timeout} passed first. */
    boolean awaitAllReleased(Duration timeout) throws InterruptedException {
        if (!slots.tryAcquire(maxSlots, timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            return false;
        }
        slots.release(maxSlots);
        return true;
    }

    /** Requests in flight now (slots taken). */
    int inflight() {
        return maxSlots - slots.availablePermits();
    }

    private static int byteUnits(long payload) {
        return (int) ((payload + BYTE_UNIT - 1) / BYTE_UNIT);
    }
}
