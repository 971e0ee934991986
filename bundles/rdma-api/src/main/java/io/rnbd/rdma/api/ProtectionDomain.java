package io.rnbd.rdma.api;

import java.nio.ByteBuffer;
import java.util.Set;

/** A protection domain: memory regions and queue pairs of one user on one device. */
public interface ProtectionDomain extends AutoCloseable {
    RdmaDevice device();

    /**
     * Register {@code buffer} (a direct buffer; its position..limit is the region) with the
     * given access. The region gets a fresh lkey and rkey.
     */
    MemoryRegion register(ByteBuffer buffer, Set<Access> access) throws RdmaException;

    /** Deregister every region and destroy the domain. Idempotent. */
    @Override
    void close();
}
