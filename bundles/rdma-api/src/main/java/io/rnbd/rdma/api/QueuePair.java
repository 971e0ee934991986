package io.rnbd.rdma.api;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * A reliable-connected queue pair together with its connection (an rdma_cm_id with a QP).
 *
 * <p>Reliable-connected semantics: requests execute in posting order; a SEND consumes the
 * peer's oldest posted RECV, and waits (receiver-not-ready, flow controlled) while none is
 * posted instead of being dropped; immediate data arrives with the RECV completion. On
 * any error the QP goes to {@link QpState#ERROR}, the connection drops, and every
 * outstanding request on both queues completes with {@link WcStatus#WR_FLUSH_ERR}.
 */
public interface QueuePair extends AutoCloseable {
    RdmaDevice device();

    ProtectionDomain pd();

    QpState state();

    InetSocketAddress localAddress();

    InetSocketAddress remoteAddress();

    /** Post to the send queue. Refused with ENOTCONN in ERROR/CLOSED, ENOMEM when full. */
    void postSend(SendWr wr) throws RdmaException;

    /**
     * Post a chain of send requests with one doorbell, as {@code ibv_post_send} takes a
     * linked list: they execute in list order, as if posted one by one. A provider for which
     * every post costs a system call (the soft provider's socket write) sends the chain in
     * one. On an exception the requests before the refused one may have been posted; their
     * completions come as usual.
     */
    default void postSend(List<SendWr> chain) throws RdmaException {
        for (SendWr wr : chain) {
            postSend(wr);
        }
    }

    /**
     * Invalidate {@code mr}'s rkey through this queue pair's send queue, as Linux's RTRS server
     * posts IB_WR_LOCAL_INV before it reads a chunk under always_invalidate: once the signaled
     * completion ({@link WcOpcode#LOCAL_INV}, {@code wrId}) has come, remote access under the
     * old rkey fails; the region stays usable in local SGEs. Where the adapter invalidates by a
     * work request (a memory window's zero-length bind), that is the request; a provider that
     * invalidates at once completes it at once, and its completion may come before those of
     * requests posted earlier. The region must be of this queue pair's protection domain; in
     * RTS only.
     */
    void postInvalidate(long wrId, MemoryRegion mr) throws RdmaException;

    /**
     * Kill {@code mr}'s rkey at once, with no work request, where this provider's invalidation
     * is a call and not a request on the send queue (a remote registration it drops): true when
     * remote access under the old key fails from the return on, and no completion follows;
     * false when nothing was done and {@link #postInvalidate} is the way. Linux's server always
     * posts LOCAL_INV, a local operation; a provider that would have to stand in for it with a
     * request the peer must acknowledge lets the caller skip that wait. Never blocks on the
     * peer; the region must be of this queue pair's protection domain.
     */
    default boolean invalidateNow(MemoryRegion mr) throws RdmaException {
        return false;
    }

    /**
     * Give {@code mr} a new rkey, live for every request a peer sends after it learned the key
     * from a message posted on this queue pair after this call (IB_WR_REG_MR ahead of the
     * answer that carries the key, as Linux's RTRS server chains them); returns the key. Never
     * signaled: only a failure completes ({@link WcOpcode#REG_MR}, {@code wrId}). Where
     * re-registration is immediate (the default), this is {@link MemoryRegion#reregister()}.
     */
    default int postReregister(long wrId, MemoryRegion mr) throws RdmaException {
        return mr.reregister();
    }

    /** Post to the receive queue. Allowed from INIT on. */
    void postRecv(RecvWr wr) throws RdmaException;

    /**
     * Start an orderly disconnect (rdma_disconnect): both sides get
     * {@link CmEvent.Type#DISCONNECTED} and outstanding requests flush.
     */
    void disconnect();

    /** Disconnect if needed and destroy. Idempotent. */
    @Override
    void close();
}
