package io.rnbd.rnbd.backend.rbd.internal;

import io.rnbd.testkit.Await;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * An {@link RbdImage} the test drives: it records what is submitted and completes it only when
 * told, the way librbd's callbacks would, by queueing (cookie, result) for {@link #poll}.
 */
final class ScriptedImage implements RbdImage {
    record Op(int op, long cookie, long offset, long length, ByteBuffer buf, int flags) {
    }

    private static final long WAKEUP = -1;

    final List<Op> submitted = new CopyOnWriteArrayList<>();
    final CountDownLatch closed = new CountDownLatch(1);
    final CountDownLatch freed = new CountDownLatch(1);
    private final BlockingQueue<long[]> events = new LinkedBlockingQueue<>();
    volatile long size;
    volatile Completions listener;
    volatile int failSubmit;
    volatile boolean closedBeforeIdle;

    ScriptedImage(long size) {
        this.size = size;
    }

    /** The last operation submitted, waiting up to 5 s for it. */
    Op last(int count) throws InterruptedException {
        // the submission may come from the poller thread (a chained flush)
        Await.until(() -> submitted.size() + " operations submitted, waiting for " + count,
                () -> submitted.size() >= count, Duration.ofSeconds(5));
        return submitted.get(count - 1);
    }

    /** Completes {@code op} as librbd would: to the listener on a thread of "librbd", else through poll. */
    void complete(Op op, long result) {
        Completions l = listener;
        if (l == null) {
            events.add(new long[] {op.cookie(), result});
            return;
        }
        Thread t = new Thread(() -> l.completed(op.cookie(), result), "librbd-callback");
        t.start();
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void listen(Completions l) {
        listener = l;
    }

    void headerChanged(long newSize) {
        size = newSize;
        events.add(new long[] {RbdNative.COOKIE_UPDATED, 0});
    }

    @Override
    public int submit(int op, long cookie, long offset, long length, ByteBuffer buf, int flags) {
        if (failSubmit != 0) {
            return -failSubmit;
        }
        if (closed.getCount() == 0) {
            closedBeforeIdle = true;
        }
        submitted.add(new Op(op, cookie, offset, length, buf, flags));
        return 0;
    }

    @Override
    public int poll(long[] out, int timeoutMs) {
        try {
            long[] e = timeoutMs < 0 ? events.take() : events.poll(timeoutMs, TimeUnit.MILLISECONDS);
            if (e == null || e[0] == WAKEUP) {
                return 0;
            }
            out[0] = e[0];
            out[1] = e[1];
            return 1;
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    @Override
    public void wakeup() {
        events.add(new long[] {WAKEUP, 0});
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public void resize(long bytes) {
        size = bytes;
    }

    @Override
    public void close() {
        closed.countDown();
    }

    @Override
    public void free() {
        freed.countDown();
    }
}
