package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;

import java.util.Random;

/**
 * When and how soon a path reconnects (NVMe-oF's nvmf_should_reconnect plus the kernel's
 * RTRS backoff, with real jitter so that many clients do not reconnect in lockstep).
 */
public final class ReconnectPolicy {
    /** Or'ed into a status: the server said retrying cannot help (CON_RSP/AUTH DNR flag). */
    public static final int DNR = 1 << 16;
    /** The backoff stops growing here. */
    public static final long MAX_BACKOFF_MS = 60_000;

    private final int delayMs;
    private final int backoffMs;
    private volatile int maxAttempts;
    private final Random random;

    /**
     * @param maxAttempts -1 = forever
     * @param delayMs     base delay ({@code reconnect.delay.sec} × 1000)
     * @param backoffMs   added per failed attempt (the kernel adds 1 s)
     * @param seed        per session, so clients spread differently
     */
    public ReconnectPolicy(int maxAttempts, int delayMs, int backoffMs, long seed) {
        if (maxAttempts < -1 || delayMs < 0 || backoffMs < 0) {
            throw new IllegalArgumentException("reconnect settings out of range");
        }
        this.maxAttempts = maxAttempts;
        this.delayMs = delayMs;
        this.backoffMs = backoffMs;
        this.random = new Random(seed);
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    public void maxAttempts(int n) {
        if (n < -1 || n > 9999) {
            throw new IllegalArgumentException("max reconnect attempts must be -1..9999: " + n);
        }
        this.maxAttempts = n;
    }

    /**
     * The single decision: stop at once on authentication failures and do-not-retry
     * statuses; otherwise retry while attempts remain.
     *
     * @param status   positive errno of the last failure, possibly with {@link #DNR}
     * @param attempts failed attempts so far (1 after the first failure)
     */
    public boolean shouldReconnect(int status, int attempts) {
        if ((status & DNR) != 0) {
            return false;
        }
        int errno = status & 0xffff;
        if (errno == Errno.ENOKEY || errno == Errno.EKEYREJECTED) {
            return false;
        }
        return maxAttempts == -1 || attempts < maxAttempts;
    }

    /**
     * Base delay before attempt {@code attempt} (1-based): delay + (attempt - 1) × backoff,
     * capped at {@link #MAX_BACKOFF_MS} (or the delay itself, if that is longer): a path that
     * has been down for an hour still comes back within a minute of its server.
     */
    public long baseDelayMs(int attempt) {
        long grown = delayMs + (long) Math.max(0, attempt - 1) * backoffMs;
        return Math.min(grown, Math.max(delayMs, MAX_BACKOFF_MS));
    }

    /** The base delay spread uniformly over ±50 %. */
    public synchronized long delayMs(int attempt) {
        long base = baseDelayMs(attempt);
        if (base == 0) {
            return 0;
        }
        long spread = base / 2;
        return base - spread + (long) (random.nextDouble() * (2 * spread + 1));
    }
}
