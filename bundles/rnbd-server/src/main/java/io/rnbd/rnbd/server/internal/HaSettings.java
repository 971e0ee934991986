package io.rnbd.rnbd.server.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every export of several servers ({@code ha = true}) on this server shares: the
 * server's name in the storage's holder record, the takeover hold-off, how often the storage is
 * looked at, and the threads that wait for it. Settings change in place (PID {@code io.rnbd.server}).
 */
final class HaSettings implements AutoCloseable {
    /** Ten seconds: two clients that each lost a different server move the storage at most every 10 s. */
    static final long DEFAULT_HOLDOFF_MS = 10_000;
    /** A fenced server that is idle learns it within a second (one request to the storage). */
    static final long DEFAULT_PROBE_MS = 1_000;
    /** Takeovers of different exports run at once, up to this many (each waits ~0.1-1 s for the cluster). */
    private static final int THREADS = 4;

    private final ExecutorService worker;
    private volatile String server = defaultName();
    private volatile long holdoffMs = DEFAULT_HOLDOFF_MS;
    private volatile long probeMs = DEFAULT_PROBE_MS;
    /** The clock a holder's age is read with against the record's time (other servers' clocks: keep them in sync). */
    private volatile java.util.function.LongSupplier wallClock = System::currentTimeMillis;

    HaSettings() {
        this(workerPool());
    }

    /** For tests that run the storage's waits on a thread of their choosing. */
    HaSettings(ExecutorService worker) {
        this.worker = worker;
    }

    private static ExecutorService workerPool() {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "rnbd-server-ha-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    static String defaultName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "localhost";
        }
    }

    Executor worker() {
        return worker;
    }

    long now() {
        return wallClock.getAsLong();
    }

    /** For tests on fake time. */
    void wallClock(java.util.function.LongSupplier clock) {
        this.wallClock = clock;
    }

    String server() {
        return server;
    }

    long holdoffMs() {
        return holdoffMs;
    }

    long probeMs() {
        return probeMs;
    }

    void server(String name) {
        if (name == null || name.isBlank() || name.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException("server.name must be a word without spaces: '" + name + "'");
        }
        this.server = name.trim();
    }

    void holdoffMs(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("ha.holdoff.ms must be >= 0: " + ms);
        }
        this.holdoffMs = ms;
    }

    void probeMs(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("ha.probe.ms must be >= 0: " + ms);
        }
        this.probeMs = ms;
    }

    /** No thread left: a takeover still waiting for the cluster is interrupted. */
    @Override
    public void close() {
        worker.shutdownNow();
        try {
            worker.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
