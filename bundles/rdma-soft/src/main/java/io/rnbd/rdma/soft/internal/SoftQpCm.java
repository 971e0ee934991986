package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.soft.internal.SoftQp.Phase;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.NoRouteToHostException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A queue pair's connection manager (siw's {@code siw_cm.c}): the TCP connect, the
 * HELLO / ACCEPT / REJECT handshake with its private data, the application's answer to a
 * connect request (accept with its setup hook, reject), the deadlines of each phase
 * (connect, handshake, unanswered request, linger), and the connection's count in its
 * source's half-open handshakes. State guarded by the QP's lock, but {@link #answered}.
 */
final class SoftQpCm {
    /** The QP's logger: its parts log as the QP always did. */
    private static final Logger LOG = LoggerFactory.getLogger(SoftQp.class);
    private static final long LINGER_NANOS = 5_000_000_000L;
    /** Below the initiator's 30 s connect timeout, so it sees the reject rather than a timeout. */
    private static final long REQUEST_TIMEOUT_NANOS = 25_000_000_000L;

    private final SoftQp qp;
    private final SoftDevice device;
    private final SoftReactor reactor;
    private final SoftQpTx tx;
    /** The passive side's listener; null on the initiator. */
    private final SoftListener listener;
    private final AtomicBoolean answered = new AtomicBoolean();

    // guarded by the QP's lock
    private long deadline;
    /** A passive connection counted in its source's handshakes until it is established or closed. */
    private boolean inHandshake;
    private byte[] hello;

    /** {@code deadline}: of the connect (initiator) or of the HELLO (passive side). */
    SoftQpCm(SoftQp qp, SoftQpTx tx, SoftListener listener, long deadline) {
        this.qp = qp;
        this.device = qp.device;
        this.reactor = qp.reactor();
        this.tx = tx;
        this.listener = listener;
        this.deadline = deadline;
        this.inHandshake = listener != null;
    }

    /** {@code destination}: the peer's TCP address, or its listener's Unix socket ({@link SoftLoopback}). */
    void startConnect(SocketAddress destination, byte[] privateData) {
        qp.lock.lock();
        try {
            startConnectLocked(destination, privateData);
        } finally {
            qp.lock.unlock();
        }
    }

    private void startConnectLocked(SocketAddress destination, byte[] privateData) {
        if (qp.phase != Phase.CONNECTING) {
            return;
        }
        hello = privateData;
        try {
            qp.register(SelectionKey.OP_CONNECT);
            if (qp.ch.connect(destination)) {
                onConnected();
            }
        } catch (IOException e) {
            connectFailed(e);
        } catch (ClosedSelectorException e) {
            qp.deviceRemoved();
        }
    }

    void onConnected() {
        qp.allocateBuffers();
        qp.changeState(Phase.AWAIT_REPLY);
        int len = hello.length;
        tx.control(Wire.HELLO, Wire.ST_OK, len, Wire.MAGIC, 0);
        if (len > 0) {
            tx.arenaBytes(hello);
        }
        hello = null;
        qp.updateInterest();
        tx.flushOut();
    }

    void connectFailed(IOException e) {
        CmEvent ev;
        // a loopback listener that closed after the route was taken leaves no socket file: refused, as over TCP
        if (e instanceof ConnectException || SoftLoopback.isUnix(qp.ch)) {
            ev = new CmEvent(CmEvent.Type.UNREACHABLE, Errno.ECONNREFUSED, "nobody listens at " + qp.remote);
        } else if (e instanceof NoRouteToHostException) {
            ev = new CmEvent(CmEvent.Type.UNREACHABLE, Errno.EHOSTUNREACH, "no route to " + qp.remote);
        } else {
            ev = new CmEvent(CmEvent.Type.CONNECT_ERROR, Errno.EIO, "connect to " + qp.remote + " failed: " + e);
        }
        qp.toError(ev, true);
    }

    /** The peer closed the connection (end of stream). */
    void peerClosed() {
        if (qp.phase == Phase.CONNECTING || qp.phase == Phase.AWAIT_REPLY) {
            qp.toError(new CmEvent(CmEvent.Type.CONNECT_ERROR, Errno.ECONNRESET, "peer closed while connecting"),
                    true);
        } else {
            qp.toError(CmEvent.of(CmEvent.Type.DISCONNECTED), true);
        }
        qp.closeChannel();
    }

    void registerPassive() throws ClosedChannelException {
        qp.lock.lock();
        try {
            registerPassiveLocked();
        } finally {
            qp.lock.unlock();
        }
    }

    private void registerPassiveLocked() throws ClosedChannelException {
        qp.allocateBuffers();
        qp.register(SelectionKey.OP_READ);
    }

    /** The initiator's HELLO is in: hand the connect request to the listener's handler. */
    void onHello(byte[] privateData) {
        if (listener.closed()) {
            qp.toError(null, true);
            return;
        }
        qp.changeState(Phase.REQUESTED);
        deadline = device.nanos() + REQUEST_TIMEOUT_NANOS;
        SoftConnectRequest request = new SoftConnectRequest(device, qp, this, privateData);
        reactor.callback(() -> {
            try {
                listener.handler().onConnectRequest(request);
            } catch (RuntimeException e) {
                LOG.warn("{}: connect request handler failed, rejecting {}", device.name(), qp.remote, e);
                if (answer()) {
                    qp.guarded(() -> rejectNow(Errno.ECONNREFUSED, new byte[0]));
                }
            }
        });
    }

    /** The acceptor's ACCEPT is in: established, and what was posted meanwhile goes out. */
    void onAccept(byte[] privateData) {
        qp.changeState(Phase.RTS);
        qp.emit(new CmEvent(CmEvent.Type.ESTABLISHED, 0, "established", privateData));
        tx.pump();
    }

    /** The acceptor's REJECT is in, its reason from the header's aux. */
    void onReject(int reason, byte[] privateData) {
        qp.toError(new CmEvent(CmEvent.Type.REJECTED, reason, "rejected by peer: " + Errno.name(reason),
                privateData), true);
    }

    /**
     * The application accepts ({@link SoftConnectRequest}): from now on the QP takes
     * posts (held until the ACCEPT is out) and reports to {@code handler}.
     */
    void prepare(QpInit qpInit, CmEventHandler handler) {
        qp.init = qpInit;
        qp.events = handler;
        device.adopt(qp);
    }

    /**
     * The setup hook ran: ACCEPT (with {@code privateData}) goes out after every RECV it
     * posted, which the IO thread takes before it reads the initiator's first frame.
     */
    void accepted(byte[] privateData) {
        reactor.execute(() -> qp.guarded(() -> {
            if (qp.phase == Phase.REQUESTED) {
                qp.wq.takePosted();
                tx.control(Wire.ACCEPT, Wire.ST_OK, privateData.length, 0, 0);
                if (privateData.length > 0) {
                    tx.arenaBytes(privateData);
                }
                qp.changeState(Phase.RTS);
                leaveHandshake();
                qp.emit(CmEvent.of(CmEvent.Type.ESTABLISHED));
                qp.service();
            } else if (qp.phase != Phase.CLOSED) {
                // toError() moved the QP to ERROR but said nothing while the request was
                // unanswered: say it now, once
                qp.emit(new CmEvent(CmEvent.Type.DISCONNECTED, Errno.ECONNRESET, "initiator went away"));
                qp.wq.flushAll();
            }
        }));
    }

    /**
     * The setup hook threw: the QP is destroyed (what the hook posted is dropped without
     * completions, as with ibv_destroy_qp; no event follows) and the initiator rejected.
     * The connection stays until the REJECT is out and the linger ends.
     */
    void setupFailed(int reason) {
        reactor.execute(() -> qp.guarded(() -> {
            qp.events = null;
            qp.wq.dropPosted();
            rejectNow(reason, new byte[0]);
            if (qp.phase != Phase.CLOSED) {
                qp.changeState(Phase.CLOSED);
            }
            if (qp.channelClosed) {
                device.forget(qp);
            }
        }));
    }

    /** Claim the right to answer the connect request (accept/reject, or the provider's own reject). */
    boolean answer() {
        return answered.compareAndSet(false, true);
    }

    void rejected(int reason, byte[] privateData) {
        reactor.execute(() -> qp.guarded(() -> rejectNow(reason, privateData)));
    }

    private void rejectNow(int reason, byte[] privateData) {
        if (qp.phase == Phase.REQUESTED) {
            tx.control(Wire.REJECT, Wire.ST_OK, privateData.length, 0, reason);
            if (privateData.length > 0) {
                tx.arenaBytes(privateData);
            }
            qp.changeState(Phase.ERROR);
            lingerAfterDrain();
        }
    }

    /** Let the connection go once the queued frames are out and the peer closed, or at the deadline. */
    void lingerAfterDrain() {
        tx.shutdownAfterDrain();
        deadline = device.nanos() + LINGER_NANOS;
        qp.rx.discard();
        tx.flushOut();
    }

    void checkDeadline(long now) {
        qp.lock.lock();
        try {
            checkDeadlineLocked(now);
        } finally {
            qp.lock.unlock();
        }
    }

    private void checkDeadlineLocked(long now) {
        if (now - deadline < 0) {
            return;
        }
        switch (qp.phase) {
            case CONNECTING:
            case AWAIT_REPLY:
                qp.toError(new CmEvent(CmEvent.Type.CONNECT_ERROR, Errno.ETIMEDOUT, "no answer from " + qp.remote),
                        true);
                break;
            case AWAIT_HELLO:
                LOG.info("{}: closing a connection from {}: no connect request within {} ms (handshake.timeout.ms)",
                        device.name(), qp.remote, device.handshake().timeoutMs());
                device.handshakes().timedOut();
                qp.toError(null, true);
                break;
            case REQUESTED:
                if (answer()) {
                    LOG.warn("{}: connect request from {} not answered in time, rejecting", device.name(), qp.remote);
                    rejectNow(Errno.ETIMEDOUT, new byte[0]);
                }
                break;
            case ERROR:
            case CLOSED: // destroyed by a failed setup hook while its REJECT lingered
                qp.closeChannel();
                break;
            default:
                break;
        }
    }

    void leaveHandshake() {
        if (inHandshake) {
            inHandshake = false;
            device.handshakes().left(qp.remote.getAddress());
        }
    }
}
