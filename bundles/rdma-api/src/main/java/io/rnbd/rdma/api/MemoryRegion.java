package io.rnbd.rdma.api;

import java.nio.ByteBuffer;
import java.util.Set;

/**
 * Registered memory. Remote peers address it by {@code (rkey, address + offset)}; the
 * provider refuses any remote access with an unknown or invalidated rkey, an address
 * range outside the region, or an access the region was not registered for, without
 * touching memory.
 */
public interface MemoryRegion extends AutoCloseable {
    ProtectionDomain pd();

    /** The registered memory: a new view at each call, whose position 0 is {@link #address()} (the caller may move it). */
    ByteBuffer buffer();

    /** Virtual address of the region's first byte, as peers name it in RDMA ops. */
    long address();

    int length();

    int lkey();

    /** Current remote key; changes on {@link #reregister()}, unless the provider gives the killed key back (see there). */
    int rkey();

    Set<Access> access();

    /**
     * False after {@link #invalidate()}, or after a peer's SEND_WITH_INV named its rkey,
     * until {@link #reregister()}. Whether a peer may invalidate a region is the
     * provider's: on hardware only fast-registered regions and memory windows can be, and a
     * SEND_WITH_INV naming any other rkey fails the receiver's queue pair.
     */
    boolean valid();

    /**
     * Kill the current rkey (local invalidate): from now on remote access with it fails.
     * Used by {@code always_invalidate} before the upper layer sees a chunk.
     */
    void invalidate();

    /**
     * Register the same memory again under a new rkey (fast-reg); returns the new rkey. A provider
     * may instead give back the key {@link #invalidate()} killed (rdma-disni on rxe switches the
     * registration's remote access off and on): what always_invalidate needs is that the key is
     * refused from the invalidation to the re-registration, not that it never comes back.
     */
    int reregister() throws RdmaException;

    /** Deregister. Idempotent. */
    @Override
    void close();
}
