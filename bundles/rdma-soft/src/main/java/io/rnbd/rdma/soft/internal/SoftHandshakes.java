package io.rnbd.rdma.soft.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A device's passive connections between TCP accept and the connect request's answer
 * (half-open, as TCP's SYN queue), counted per source address and capped at
 * {@link SoftDevice.Handshake#maxPerSource()}, with the counts of connections refused and
 * timed out in the handshake that {@link SoftDevice#counters()} shows.
 */
final class SoftHandshakes {
    /** The device's logger: the refusal is logged as it always was. */
    private static final Logger LOG = LoggerFactory.getLogger(SoftDevice.class);

    private final String name;
    private final SoftDevice.Handshake limits;
    private final ConcurrentHashMap<InetAddress, Integer> halfOpen = new ConcurrentHashMap<>();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong timedOut = new AtomicLong();

    SoftHandshakes(String name, SoftDevice.Handshake limits) {
        this.name = name;
        this.limits = limits;
    }

    /**
     * Whether one more connection from {@code source} may enter the handshake; if so it is
     * counted until {@link #left}. A refusal is logged at the first, second, fourth,
     * eighth... refusal, so a flood cannot flood the log.
     */
    boolean enter(InetAddress source) {
        boolean[] admitted = {false};
        halfOpen.compute(source, (k, n) -> {
            int c = n == null ? 0 : n;
            if (c >= limits.maxPerSource()) {
                return n;
            }
            admitted[0] = true;
            return c + 1;
        });
        if (!admitted[0]) {
            long r = refused.incrementAndGet();
            if ((r & (r - 1)) == 0) {
                LOG.warn("{}: refusing a connection from {}: {} connections from there are already in the handshake "
                        + "(max.half.open.per.source; {} refused so far)", name, source.getHostAddress(),
                        limits.maxPerSource(), r);
            }
        }
        return admitted[0];
    }

    void left(InetAddress source) {
        halfOpen.computeIfPresent(source, (k, n) -> n <= 1 ? null : n - 1);
    }

    /** Connections from {@code source} in the handshake now. */
    int halfOpen(InetAddress source) {
        return halfOpen.getOrDefault(source, 0);
    }

    void timedOut() {
        timedOut.incrementAndGet();
    }

    long refusedCount() {
        return refused.get();
    }

    long timedOutCount() {
        return timedOut.get();
    }
}
