package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.ConnectRequest;
import io.rnbd.rdma.api.Errno;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;

import java.net.InetSocketAddress;

final class SoftConnectRequest implements ConnectRequest {
    private final SoftDevice device;
    private final SoftQp qp;
    private final byte[] privateData;

    SoftConnectRequest(SoftDevice device, SoftQp qp, byte[] privateData) {
        this.device = device;
        this.qp = qp;
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

    @Override
    public QueuePair accept(QpInit init, CmEventHandler events) throws RdmaException {
        device.checkOpen();
        device.checkInit(init);
        if (events == null) {
            throw new RdmaException(Errno.EINVAL, "event handler required");
        }
        if (!qp.answer()) {
            throw new RdmaException(Errno.EALREADY, "connect request already answered");
        }
        qp.accepted(init, events);
        return qp;
    }

    @Override
    public void reject(int reason) {
        if (qp.answer()) {
            qp.rejected(Math.abs(reason));
        }
    }
}
