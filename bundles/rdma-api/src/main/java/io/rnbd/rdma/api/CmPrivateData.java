package io.rnbd.rdma.api;

import io.rnbd.common.Errno;

/**
 * How much private data a connection manager message carries, as the IB CM allows it
 * through rdma_cm (the tightest of the transports; iWARP allows 512 everywhere): a
 * protocol that fits these fits every provider. RTRS's CON_REQ (56 bytes) exactly fills a
 * connect; its CON_RSP (56) travels in an accept or a reject.
 */
public final class CmPrivateData {
    /** rdma_connect: the IB REQ's 92 bytes less rdma_cm's 36-byte header. */
    public static final int CONNECT_MAX = 56;
    /** rdma_accept: the IB REP's private data. */
    public static final int ACCEPT_MAX = 196;
    /** rdma_reject: the IB REJ's private data. */
    public static final int REJECT_MAX = 148;

    private CmPrivateData() {
    }

    /** A copy of {@code data} (null is empty), refused with EINVAL above {@code max} bytes. */
    public static byte[] check(byte[] data, int max, String what) throws RdmaException {
        if (data == null) {
            return new byte[0];
        }
        if (data.length > max) {
            throw new RdmaException(Errno.EINVAL, what + " private data of " + data.length + " bytes, at most " + max);
        }
        return data.clone();
    }
}
