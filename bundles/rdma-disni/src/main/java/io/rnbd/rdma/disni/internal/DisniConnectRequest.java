package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.RdmaCmId;
import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.CmPrivateData;
import io.rnbd.rdma.api.ConnectRequest;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An incoming request, with the initiator's private data as the CM delivered it (on IB and
 * RoCE always the REQ's whole 56-byte field, zero-filled past what was sent). A reject
 * goes out as rdma_reject with private data: the IB CM carries it with its own reason
 * (28, consumer defined), so the initiator sees REJECTED with ECONNREFUSED and the data.
 */
final class DisniConnectRequest implements ConnectRequest {
    private final DisniDevice device;
    private final RdmaCmId id;
    private final InetSocketAddress local;
    private final InetSocketAddress remote;
    private final byte[] privateData;
    private final AtomicBoolean answered = new AtomicBoolean();

    DisniConnectRequest(DisniDevice device, RdmaCmId id, InetSocketAddress local, InetSocketAddress remote,
                        byte[] privateData) {
        this.device = device;
        this.id = id;
        this.local = local;
        this.remote = remote;
        this.privateData = privateData;
    }

    @Override
    public RdmaDevice device() {
        return device;
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return remote;
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public QueuePair accept(QpInit init, CmEventHandler events, byte[] privateData, QpSetup beforeAccept)
            throws RdmaException {
        if (events == null || beforeAccept == null) {
            throw new RdmaException(Errno.EINVAL, "event handler and setup required");
        }
        byte[] pdata = CmPrivateData.check(privateData, CmPrivateData.ACCEPT_MAX, "accept");
        if (!answered.compareAndSet(false, true)) {
            throw new RdmaException(Errno.EALREADY, "connect request already answered");
        }
        return device.accept(id, init, events, remote, pdata, beforeAccept);
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
        if (answered.compareAndSet(false, true)) {
            device.reject(id, pdata);
        }
    }
}
