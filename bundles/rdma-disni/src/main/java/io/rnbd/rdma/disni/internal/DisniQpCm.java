package io.rnbd.rdma.disni.internal;

import com.ibm.disni.verbs.RdmaCmId;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.QpState;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * The target of a queue pair's CM id, on the device's CM thread: drives the initiator's
 * address and route resolution into rdma_connect (with the connect's private data and
 * Linux's RTRS retry counts), and turns the CM's ESTABLISHED, errors, rejects,
 * DISCONNECTED and DEVICE_REMOVAL into the queue pair's state changes and events.
 */
final class DisniQpCm implements CmTarget {
    /** Transport retries on a lost packet (the most the IB CM allows, as Linux's RTRS asks). */
    static final int RETRY_COUNT = 7;
    /** RNR retries: 7 means "forever", so a SEND that finds no RECV waits for one (as Linux's RTRS asks). */
    static final int RNR_RETRY_INFINITE = 7;
    /** enum ib_cm_rej_reason: the CM has no listener for the service (nobody listens on that port). */
    private static final int IB_CM_REJ_INVALID_SERVICE_ID = 8;
    /** enum ib_cm_rej_reason: rdma_reject by the acceptor (or a destroyed request id). */
    private static final int IB_CM_REJ_CONSUMER_DEFINED = 28;

    private final DisniQueuePair qp;
    private final DisniDevice device;
    private final RdmaCmId id;
    /** The initiator's connect private data; null on the passive side. */
    private final byte[] connectData;

    DisniQpCm(DisniQueuePair qp, DisniDevice device, RdmaCmId id, byte[] connectData) {
        this.qp = qp;
        this.device = device;
        this.id = id;
        this.connectData = connectData;
    }

    @Override
    public void onCmEvent(int type, RdmaCmId cmId, CmNative.EventData data) {
        int status = data == null ? 0 : data.status();
        try {
            switch (type) {
                case CmEvents.ADDR_RESOLVED:
                    device.cm(() -> {
                        id.resolveRoute(device.cmTimeoutMs());
                        return null;
                    });
                    break;
                case CmEvents.ROUTE_RESOLVED:
                    // rdma_connect with the private data (Linux's RTRS: CON_REQ) and infinite RNR retry
                    device.cm(() -> {
                        CmNative.check(CmNative.connect(CmNative.liveHandle(id), connectData, RETRY_COUNT,
                                RNR_RETRY_INFINITE), "rdma_connect");
                        return null;
                    });
                    break;
                case CmEvents.ESTABLISHED:
                    qp.local = (InetSocketAddress) device.cm(id::getSource);
                    InetSocketAddress peer = (InetSocketAddress) device.cm(id::getDestination);
                    if (peer != null) {
                        qp.remote = peer;
                    }
                    qp.established(data == null ? null : data.privateData());
                    break;
                case CmEvents.ADDR_ERROR:
                case CmEvents.ROUTE_ERROR:
                case CmEvents.UNREACHABLE:
                    // rdma_cm's status here is a negative errno (e.g. -ETIMEDOUT: no answer to the REQ)
                    qp.connectFailed(new CmEvent(CmEvent.Type.UNREACHABLE, status < 0 ? -status : Errno.EHOSTUNREACH,
                            "unreachable: " + qp.remote + " (rdma_cm status " + status + ")"));
                    break;
                case CmEvents.REJECTED:
                    qp.connectFailed(rejected(status, data));
                    break;
                case CmEvents.CONNECT_ERROR:
                    qp.connectFailed(new CmEvent(CmEvent.Type.CONNECT_ERROR, status < 0 ? -status : Errno.ECONNABORTED,
                            "connect error (rdma_cm status " + status + ")"));
                    break;
                case CmEvents.DISCONNECTED:
                    if (qp.state != QpState.CLOSED) {
                        qp.state = QpState.ERROR;
                        qp.sendDisconnect(); // moves our QP to ERROR so posted requests flush
                        qp.emit(CmEvent.of(CmEvent.Type.DISCONNECTED));
                    }
                    break;
                case CmEvents.DEVICE_REMOVAL:
                    device.removalDetected(); // unpublished first, then this QP flushes via deviceRemoved()
                    break;
                default:
                    break;
            }
        } catch (IOException e) {
            qp.connectFailed(new CmEvent(CmEvent.Type.CONNECT_ERROR, Errors.errno(e, Errno.EIO), e.getMessage()));
        }
    }

    /**
     * REJECTED's status is the IB CM's reject reason (iWARP: a negative errno). The CM
     * itself rejects a connect to a port nobody listens on (INVALID_SERVICE_ID): that is
     * UNREACHABLE/ECONNREFUSED, as a TCP reset is for the soft provider. A consumer reject
     * cannot carry the rejecter's reason: ECONNREFUSED with the reject's private data (IB:
     * its whole 148 bytes), where protocols put their reason.
     */
    private CmEvent rejected(int status, CmNative.EventData data) {
        if (status == IB_CM_REJ_INVALID_SERVICE_ID) {
            return new CmEvent(CmEvent.Type.UNREACHABLE, Errno.ECONNREFUSED, "nobody listens at " + qp.remote);
        }
        String why = status == IB_CM_REJ_CONSUMER_DEFINED ? "rejected by " + qp.remote
                : "rejected by " + qp.remote + " (" + (status < 0 ? Errno.name(status) : "IB CM reason " + status) + ")";
        return new CmEvent(CmEvent.Type.REJECTED, Errno.ECONNREFUSED, why, data == null ? null : data.privateData());
    }
}
