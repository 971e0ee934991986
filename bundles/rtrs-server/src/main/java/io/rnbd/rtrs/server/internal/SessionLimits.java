package io.rnbd.rtrs.server.internal;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The queue depth and chunk size each session was given, remembered after it leaves, so that
 * a client coming back is given them again. Linux's client refuses a session whose queue
 * depth changed between reconnects and then stops reconnecting for good
 * (rtrs_rdma_conn_established: "queue depth changed", reconnect_attempts = -1): a changed
 * {@code queue.depth} or {@code chunk.size} therefore applies to new sessions, never to one
 * this server has seen. Bounded: the least recently used of {@link #MAX} sessions is
 * forgotten first. Kept by whoever outlives the server it is handed to (the OSGi component
 * across configuration changes); thread-safe.
 */
public final class SessionLimits {
    /** One session's limits. */
    public record Limits(int queueDepth, int chunkSize) {
    }

    static final int MAX = 4096;

    private final Map<UUID, Limits> seen = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<UUID, Limits> eldest) {
            return size() > MAX;
        }
    };

    /** What session {@code uuid} gets: what it had, else {@code current}, remembered from now on. */
    synchronized Limits of(UUID uuid, Limits current) {
        return seen.computeIfAbsent(uuid, u -> current);
    }

    synchronized int size() {
        return seen.size();
    }
}
