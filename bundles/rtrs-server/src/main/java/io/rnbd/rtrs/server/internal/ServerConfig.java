package io.rnbd.rtrs.server.internal;

import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.Rtrs;

/**
 * The server's knobs (PID {@code io.rnbd.rtrs.server}), validated on construction.
 *
 * @param port             listening port on every device address
 * @param chunkSize        bytes per chunk, a power of two, at least 8 KiB
 * @param queueDepth       chunks (and so client permits) per session
 * @param alwaysInvalidate invalidate a chunk's rkey before the upper layer sees it
 * @param hbIntervalMs     heartbeat period
 * @param hbMissedMax      heartbeats missed before a path is declared dead
 * @param upperWaitMs      how long a request waits for an upper layer (the RNBD server) while
 *                         there is none, e.g. while its bundle restarts; then ENODEV
 * @param handshakeTimeoutMs how long a path may stay CONNECTING (CON_REQ accepted, authentication
 *                         and INFO_REQ not yet done) before it is closed
 * @param maxHalfOpenPerSource paths from one source address that may be CONNECTING at once; a
 *                         connect request for one more new path is refused with EAGAIN
 */
public record ServerConfig(int port, int chunkSize, int queueDepth, boolean alwaysInvalidate, long hbIntervalMs,
                           int hbMissedMax, long upperWaitMs, long handshakeTimeoutMs, int maxHalfOpenPerSource) {
    public static final long DEFAULT_UPPER_WAIT_MS = 30_000;
    public static final long DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;
    public static final int DEFAULT_MAX_HALF_OPEN_PER_SOURCE = 16;

    public ServerConfig(int port, int chunkSize, int queueDepth, boolean alwaysInvalidate, long hbIntervalMs,
                        int hbMissedMax) {
        this(port, chunkSize, queueDepth, alwaysInvalidate, hbIntervalMs, hbMissedMax, DEFAULT_UPPER_WAIT_MS,
                DEFAULT_HANDSHAKE_TIMEOUT_MS, DEFAULT_MAX_HALF_OPEN_PER_SOURCE);
    }

    public ServerConfig {
        if (upperWaitMs < 0) {
            throw new IllegalArgumentException("upper.wait.ms must be >= 0: " + upperWaitMs);
        }
        if (handshakeTimeoutMs < 100 || handshakeTimeoutMs > 600_000) {
            throw new IllegalArgumentException("handshake.timeout.ms must be 100..600000: " + handshakeTimeoutMs);
        }
        if (maxHalfOpenPerSource < 1) {
            throw new IllegalArgumentException("max.half.open.per.source must be at least 1: " + maxHalfOpenPerSource);
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be 0..65535: " + port);
        }
        if (chunkSize < Rtrs.MIN_CHUNK_SIZE || Integer.bitCount(chunkSize) != 1) {
            throw new IllegalArgumentException("chunk.size must be a power of two >= " + Rtrs.MIN_CHUNK_SIZE + ": " + chunkSize);
        }
        if (queueDepth < 1 || queueDepth > Rtrs.MAX_SESS_QUEUE_DEPTH) {
            throw new IllegalArgumentException("queue.depth must be 1.." + Rtrs.MAX_SESS_QUEUE_DEPTH + ": " + queueDepth);
        }
        if (!Imm.fits(queueDepth, chunkSize)) {
            throw new IllegalArgumentException("queue.depth " + queueDepth + " x chunk.size " + chunkSize
                    + " cannot be addressed by the 28-bit IMM offset");
        }
        if (hbIntervalMs <= 0 || hbMissedMax <= 0) {
            throw new IllegalArgumentException("hb.interval.ms and hb.missed.max must be positive");
        }
    }

    /**
     * The appliance's chunk: 256 KiB, where Linux's rtrs-srv has 128 KiB ({@link Rtrs#DEFAULT_CHUNK_SIZE}). Max
     * IO is the chunk less 4 KiB of header room, so with 128 KiB a 128 KiB request (qemu's,
     * fio's, the NBD gateway's clients') is carried as 124 + 4 KiB, two RTRS IOs; with 256 KiB
     * it goes whole. The server chooses and clients adapt (Linux's too: it takes max_io_size
     * and the queue depth from CON_RSP).
     */
    public static final int DEFAULT_CHUNK_SIZE = 256 * 1024;
    /**
     * Chunks per session: 256, so a session registers what Linux's defaults register (512 x
     * 128 KiB = 64 MiB). It is also the most IO a session has in flight over all its devices;
     * raise queue.depth for more, at queue.depth x chunk.size of memory per session.
     */
    public static final int DEFAULT_QUEUE_DEPTH = 256;

    public static ServerConfig defaults() {
        return new ServerConfig(Rtrs.DEFAULT_PORT, DEFAULT_CHUNK_SIZE, DEFAULT_QUEUE_DEPTH, true,
                Rtrs.HB_INTERVAL_MS, Rtrs.HB_MISSED_MAX);
    }

    public int maxIoSize() {
        return chunkSize - Rtrs.CHUNK_RESERVE;
    }

    public ServerConfig withPort(int p) {
        return new ServerConfig(p, chunkSize, queueDepth, alwaysInvalidate, hbIntervalMs, hbMissedMax, upperWaitMs,
                handshakeTimeoutMs, maxHalfOpenPerSource);
    }

    public ServerConfig withUpperWait(long ms) {
        return new ServerConfig(port, chunkSize, queueDepth, alwaysInvalidate, hbIntervalMs, hbMissedMax, ms,
                handshakeTimeoutMs, maxHalfOpenPerSource);
    }

    public ServerConfig withHandshake(long timeoutMs, int perSource) {
        return new ServerConfig(port, chunkSize, queueDepth, alwaysInvalidate, hbIntervalMs, hbMissedMax, upperWaitMs,
                timeoutMs, perSource);
    }
}
