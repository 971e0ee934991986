package io.rnbd.rtrs.server.internal;

import io.rnbd.rtrs.proto.Rtrs;

import java.nio.ByteBuffer;

/**
 * A session's chunks, shared by its paths (only their registrations are a path's): the
 * memory, one chunk per client permit, and per chunk the request the upper layer has on it
 * and a copy of it that the client failed over to another path while the first still runs
 * (rtrs_clt_failover_req resends with the same permit, so the same chunk; see
 * {@link ServerIo#onIoReq}). Guarded by the session lock.
 */
final class Chunks {
    private final int chunkSize;
    /**
     * Allocated when the session's first path finishes its handshake: a connect request costs
     * no chunk memory (64 MiB at the defaults), so nobody can make the server allocate it
     * without authenticating.
     */
    private ByteBuffer[] memory;
    /** Per chunk: the request the upper layer has on it (null: free). */
    final ServerRequest[] holder;
    /** Per chunk: the failed-over copy that waits for {@link #holder} to leave. */
    final ServerRequest[] next;

    Chunks(int queueDepth, int chunkSize) {
        this.chunkSize = chunkSize;
        this.holder = new ServerRequest[queueDepth];
        this.next = new ServerRequest[queueDepth];
    }

    /** Chunks (permits) of the session: the queue depth it was created with, whatever queue.depth is now. */
    int queueDepth() {
        return holder.length;
    }

    int chunkSize() {
        return chunkSize;
    }

    /** The chunk less the room for headers, as CON_RSP's max_io_size. */
    int maxIoSize() {
        return chunkSize - Rtrs.CHUNK_RESERVE;
    }

    /** The memory, allocated on first use (a path's INFO_REQ). */
    ByteBuffer[] memory() {
        if (memory == null) {
            ByteBuffer[] c = new ByteBuffer[holder.length];
            for (int i = 0; i < c.length; i++) {
                c[i] = ByteBuffer.allocateDirect(chunkSize);
            }
            memory = c;
        }
        return memory;
    }
}
