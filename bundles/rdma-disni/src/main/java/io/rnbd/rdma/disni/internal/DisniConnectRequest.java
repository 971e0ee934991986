package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.RdmaCmId;
import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.ConnectRequest;
import io.rnbd.rdma.api.Errno;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An incoming request. DiSNI can neither read its private data (always empty here) nor
 * send a reject with a reason: reject destroys the request's id, which makes the CM
 * answer with a consumer reject, so the initiator sees REJECTED with ECONNREFUSED.
 */
final class DisniConnectRequest implements ConnectRequest {
    private final DisniDevice device;
    private final RdmaCmId id;
    private final InetSocketAddress local;
    private final InetSocketAddress remote;
    private final AtomicBoolean answered = new AtomicBoolean();

    DisniConnectRequest(DisniDevice device, RdmaCmId id, InetSocketAddress local, InetSocketAddress remote) {
        this.device = device;
        this.id = id;
        this.local = local;
        this.remote = remote;
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
        return new byte[0];
    }

    @Override
    public QueuePair accept(QpInit init, CmEventHandler events) throws RdmaException {
        if (!answered.compareAndSet(false, true)) {
            throw new RdmaException(Errno.EALREADY, "connect request already answered");
        }
        return device.accept(id, init, events, remote);
    }

    @Override
    public void reject(int reason) {
        if (answered.compareAndSet(false, true)) {
            device.destroyIdQuietly(id);
        }
    }
}
