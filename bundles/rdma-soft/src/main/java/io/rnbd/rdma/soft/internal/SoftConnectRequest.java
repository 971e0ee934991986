package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.CmPrivateData;
import io.rnbd.rdma.api.ConnectRequest;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;

import java.net.InetSocketAddress;

/** A HELLO that arrived, answered through the connection manager of the QP created with it. */
final class SoftConnectRequest implements ConnectRequest {
    private final SoftDevice device;
    private final SoftQp qp;
    private final SoftQpCm cm;
    private final byte[] privateData;

    SoftConnectRequest(SoftDevice device, SoftQp qp, SoftQpCm cm, byte[] privateData) {
        this.device = device;
        this.qp = qp;
        this.cm = cm;
        this.privateData = privateData;
    }

    @Override
    public RdmaDevice device() {
        return device;
    }

    @Override
    public InetSocketAddress localAddress() {
        return qp.localAddress();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return qp.remoteAddress();
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    /**
     * The QP (created with the connection) takes {@code init}; {@code beforeAccept} runs
     * here, on the caller's thread, and what it posts is queued on the QP before the
     * ACCEPT frame is even queued, so the initiator's first SEND always finds it.
     */
    @Override
    public QueuePair accept(QpInit init, CmEventHandler events, byte[] privateData, QpSetup beforeAccept)
            throws RdmaException {
        device.checkOpen();
        device.checkInit(init);
        if (events == null || beforeAccept == null) {
            throw new RdmaException(Errno.EINVAL, "event handler and setup required");
        }
        byte[] pdata = CmPrivateData.check(privateData, CmPrivateData.ACCEPT_MAX, "accept");
        if (!cm.answer()) {
            throw new RdmaException(Errno.EALREADY, "connect request already answered");
        }
        cm.prepare(init, events);
        try {
            beforeAccept.setUp(qp);
        } catch (RdmaException | RuntimeException e) {
            // as rdma_cm users do: a QP that cannot be set up is destroyed and the peer refused
            cm.setupFailed(Errno.ECONNREFUSED);
            throw e;
        }
        cm.accepted(pdata);
        return qp;
    }

    /**
     * @throws IllegalArgumentException for private data longer than
     *                                  {@link CmPrivateData#REJECT_MAX} (nothing is sent:
     *                                  the request may still be answered)
     */
    @Override
    public void reject(int reason, byte[] privateData) {
        byte[] pdata;
        try {
            pdata = CmPrivateData.check(privateData, CmPrivateData.REJECT_MAX, "reject");
        } catch (RdmaException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        if (cm.answer()) {
            cm.rejected(Math.abs(reason), pdata);
        }
    }
}
