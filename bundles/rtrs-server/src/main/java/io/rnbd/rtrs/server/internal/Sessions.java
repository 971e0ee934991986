package io.rnbd.rtrs.server.internal;

import io.rnbd.rtrs.proto.ConReq;

import java.net.InetSocketAddress;

/**
 * The session table as the {@link Acceptor} sees it: admit a connection (rtrs_rdma_connect's
 * checks of the session and its path), and let go of what a device that leaves carried.
 * {@link SessionTable} has the one implementation.
 */
interface Sessions {

    /**
     * A connect request's CON_REQ {@code cr} on {@code dev}, from {@code remote} to {@code local}:
     * find or create (only with first_conn) the session, find or create the path, reserve the
     * connection. Any thread; takes the session lock.
     */
    Admission admit(ConReq cr, DeviceContext dev, InetSocketAddress local, InetSocketAddress remote);

    /** The device leaves: its paths give back everything of it now and drain later. */
    void deviceRemoved(DeviceContext dev);

    /**
     * What became of a connect request: refused with {@code errno} (and do-not-retry), or a
     * connection to accept with the session's queue depth and max IO in its CON_RSP, and the
     * receives it keeps posted.
     */
    record Admission(int errno, boolean doNotRetry, Connection con, int queueDepth, int maxIoSize, int recvs) {
        static Admission refused(int errno, boolean doNotRetry) {
            return new Admission(errno, doNotRetry, null, 0, 0, 0);
        }
    }
}
