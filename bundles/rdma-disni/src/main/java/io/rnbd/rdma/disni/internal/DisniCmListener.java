package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.RdmaCmId;
import io.rnbd.rdma.api.CmListener;
import io.rnbd.rdma.api.ConnectRequestHandler;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RdmaDevice;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A listening CM id; hands each CONNECT_REQUEST to the handler as a {@link DisniConnectRequest}. */
final class DisniCmListener implements CmListener, CmTarget {
    private static final Logger LOG = LoggerFactory.getLogger(DisniCmListener.class);

    private final DisniDevice device;
    private final RdmaCmId id;
    private final InetSocketAddress local;
    private final ConnectRequestHandler handler;
    private final AtomicBoolean open = new AtomicBoolean(true);

    DisniCmListener(DisniDevice device, RdmaCmId id, InetSocketAddress local, ConnectRequestHandler handler) {
        this.device = device;
        this.id = id;
        this.local = local;
        this.handler = handler;
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
    public void onCmEvent(int type, RdmaCmId child, CmNative.EventData data) {
        if (type == CmEvents.DEVICE_REMOVAL) {
            device.removalDetected();
            return;
        }
        if (type != CmEvents.CONNECT_REQUEST || !open.get()) {
            if (child != id) {
                device.destroyIdQuietly(child);
            }
            return;
        }
        InetSocketAddress l;
        InetSocketAddress r;
        try {
            l = (InetSocketAddress) device.cm(child::getSource);
            r = (InetSocketAddress) device.cm(child::getDestination);
        } catch (IOException e) {
            LOG.debug("rdma-disni: addresses of a connect request", e);
            device.destroyIdQuietly(child);
            return;
        }
        byte[] privateData = data == null ? new byte[0] : data.privateData();
        DisniConnectRequest request = new DisniConnectRequest(device, child, l == null ? local : l, r, privateData);
        try {
            handler.onConnectRequest(request);
        } catch (RuntimeException e) {
            // an unanswered request would hold its id until the initiator gives up
            LOG.warn("rdma-disni: connect request handler failed, rejecting {}", r, e);
            request.reject(Errno.ECONNREFUSED);
        }
    }

    @Override
    public void close() {
        if (open.compareAndSet(true, false)) {
            device.forget(this);
            device.destroyIdQuietly(id);
        }
    }
}
