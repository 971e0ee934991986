package io.rnbd.rtrs.api;

import java.nio.ByteBuffer;

/** One client request as the server's upper layer sees it. */
public interface RtrsServerRequest {
    RtrsServerSession session();

    /** True for a write (data came with it), false for a read (data is to be returned). */
    boolean isWrite();

    /** The client's user header (read-only view). */
    ByteBuffer userHeader();

    /**
     * For a write: the data the client sent (read-only view). For a read: the chunk
     * memory to fill, with its limit set to the number of bytes the client asked for.
     */
    ByteBuffer data();

    /**
     * Answer the client: 0 on success or a positive errno. The first call answers; a later
     * one is ignored (the transport guards it, so an upper layer that fails after it answered
     * need not). Since 1.8.
     */
    void complete(int errno);
}
