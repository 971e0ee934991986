package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmEventHandler;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.QpInit;
import io.rnbd.rdma.api.QpState;
import io.rnbd.rdma.api.QueuePair;
import io.rnbd.rdma.api.RdmaDevice;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WcStatus;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A reliable-connected queue pair over one TCP connection (siw's {@code siw_verbs.c} and
 * {@code siw_qp.c}): the verbs, the state with its one guarded transition, the work
 * queues, the IO thread's entry points, and the error path with its completions. Both
 * ends are initiator (of their send queue) and target (of the peer's): the target
 * validates every RDMA access against its own device's rkey table, places payload
 * straight into registered memory and acknowledges in order, so the initiator completes
 * its requests in posting order. The engine is split as siw's: {@link SoftQpCm}
 * (connection management), {@link SoftQpRx} (inbound frames), {@link SoftQpTx}
 * (outbound frames).
 *
 * <p>All fields without a concurrent type, and the parts' state, are guarded by
 * {@link #lock}. The device's IO thread takes it whenever it works on the QP. Another
 * thread that posts a SEND while the send side is idle takes it too, with a try-lock, and
 * transmits from its own context ({@link SoftQpTx#transmitInline}), as siw does for user
 * QPs: at queue depth 1 that saves the wakeup of the IO thread, which was the largest part
 * of the soft provider's latency. Anything else (errors, completions, partial writes) is
 * left to the IO thread, which alone delivers callbacks.
 */
final class SoftQp implements QueuePair, SoftReactor.Channel {
    private static final Logger LOG = LoggerFactory.getLogger(SoftQp.class);

    /**
     * Where the connection is, and the moves {@link #changeState} allows: connect or HELLO,
     * answer, RTS; any live phase to ERROR; ERROR to CLOSED (destroyed; the connection may
     * still linger to deliver a REJECT). Each phase shows the application a {@link QpState}.
     */
    enum Phase {
        CONNECTING(QpState.INIT), AWAIT_REPLY(QpState.INIT), AWAIT_HELLO(QpState.INIT), REQUESTED(QpState.INIT),
        RTS(QpState.RTS), ERROR(QpState.ERROR), CLOSED(QpState.CLOSED);

        static {
            CONNECTING.next = EnumSet.of(AWAIT_REPLY, ERROR);
            AWAIT_REPLY.next = EnumSet.of(RTS, ERROR);
            AWAIT_HELLO.next = EnumSet.of(REQUESTED, ERROR);
            REQUESTED.next = EnumSet.of(RTS, ERROR);
            RTS.next = EnumSet.of(ERROR);
            ERROR.next = EnumSet.of(CLOSED);
            CLOSED.next = EnumSet.noneOf(Phase.class);
        }

        private final QpState visible;
        private Set<Phase> next;

        Phase(QpState visible) {
            this.visible = visible;
        }

        QpState visible() {
            return visible;
        }

        boolean canMoveTo(Phase to) {
            return next.contains(to);
        }

        /** Whether a frame of this type may arrive now. */
        boolean admits(byte type) {
            switch (this) {
                case AWAIT_HELLO:
                    return type == Wire.HELLO;
                case AWAIT_REPLY:
                    return type == Wire.ACCEPT || type == Wire.REJECT;
                case RTS:
                    return type >= Wire.SEND && type <= Wire.SEND_INV;
                default:
                    return false;
            }
        }
    }

    final SoftDevice device;
    private final SoftReactor reactor;
    final SocketChannel ch;
    final InetSocketAddress remote;
    private volatile InetSocketAddress local;
    volatile QpInit init;
    volatile CmEventHandler events;
    private volatile QpState state = QpState.INIT;

    private final AtomicBoolean serviceQueued = new AtomicBoolean();
    final ReentrantLock lock = new ReentrantLock();

    // guarded by lock
    Phase phase;
    private SelectionKey key;
    boolean channelClosed;

    final SoftQpQueues wq;
    final SoftQpTx tx;
    final SoftQpCm cm;
    final SoftQpRx rx;

    private SoftQp(SoftDevice device, SoftReactor reactor, SocketChannel ch, SoftListener listener,
                   InetSocketAddress remote, Phase phase, long deadline) {
        this.device = device;
        this.reactor = reactor;
        this.ch = ch;
        this.remote = remote;
        this.local = localOf(device, ch, listener);
        this.phase = phase;
        this.wq = new SoftQpQueues(this, reactor);
        this.tx = new SoftQpTx(this, ch, wq, device.mem());
        this.cm = new SoftQpCm(this, tx, listener, deadline);
        this.rx = new SoftQpRx(this, ch, wq, tx, cm, device.mem());
    }

    static SoftQp active(SoftDevice device, SoftReactor reactor, SocketChannel ch, QpInit init,
                         CmEventHandler events, InetSocketAddress destination, long connectDeadline) {
        // the deadline is set before the device's tick can see the QP (published through the device's QP set)
        SoftQp qp = new SoftQp(device, reactor, ch, null, destination, Phase.CONNECTING, connectDeadline);
        qp.init = init;
        qp.events = events;
        return qp;
    }

    static SoftQp passive(SoftDevice device, SoftReactor reactor, SocketChannel ch, SoftListener listener,
                          long helloDeadline) throws IOException {
        // a loopback connection (SoftLoopback) comes from this device: its address, no port
        InetSocketAddress remote = ch.getRemoteAddress() instanceof InetSocketAddress inet
                ? inet : new InetSocketAddress(device.address(), 0);
        return new SoftQp(device, reactor, ch, listener, remote, Phase.AWAIT_HELLO, helloDeadline);
    }

    /**
     * The local end as RDMA CM shows it: the socket's, or for a loopback connection
     * ({@link SoftLoopback}, a Unix socket) the listener's TCP address on the passive side and the
     * device's address with no port on the active side. Null before a TCP connect binds.
     */
    private static InetSocketAddress localOf(SoftDevice device, SocketChannel ch, SoftListener listener) {
        try {
            if (ch.getLocalAddress() instanceof InetSocketAddress inet) {
                return inet;
            }
        } catch (IOException e) {
            return null;
        }
        return new InetSocketAddress(device.address(), listener != null ? listener.localAddress().getPort() : 0);
    }

    /** The IO thread this QP lives on. */
    SoftReactor reactor() {
        return reactor;
    }

    /** The one place the phase (and so the state the application sees) changes. */
    void changeState(Phase to) {
        if (!phase.canMoveTo(to)) {
            throw new IllegalStateException(this + ": no move from " + phase + " to " + to);
        }
        phase = to;
        state = to.visible();
    }

    // ---------------------------------------------------------------- public verbs

    @Override
    public RdmaDevice device() {
        return device;
    }

    @Override
    public ProtectionDomain pd() {
        QpInit i = init;
        return i == null ? null : i.pd();
    }

    @Override
    public QpState state() {
        return state;
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
    public void postSend(SendWr wr) throws RdmaException {
        postSend(List.of(wr));
    }

    /**
     * All or nothing: the chain is checked and its send queue slots taken before any of it
     * is posted. Then it goes out in one socket write, from this thread when the send side
     * is idle ({@link SoftQpTx#transmitInline}).
     */
    @Override
    public void postSend(List<SendWr> chain) throws RdmaException {
        QpState s = state;
        if (s == QpState.ERROR || s == QpState.CLOSED) {
            throw new RdmaException(Errno.ENOTCONN, "queue pair is " + s);
        }
        QpInit i = init;
        for (SendWr wr : chain) {
            if (wr.sgl().size() > i.maxSge()) {
                throw new RdmaException(Errno.EINVAL, "more than " + i.maxSge() + " SGEs");
            }
            if (wr.totalLength() > SoftDevice.ATTRIBUTES.maxMrSize()) {
                throw new RdmaException(Errno.EINVAL, "message larger than " + SoftDevice.ATTRIBUTES.maxMrSize());
            }
        }
        wq.postSends(chain, i.maxSendWr());
        if (!reactor.inLoop() && tx.transmitInline()) {
            return;
        }
        requestService();
    }

    /**
     * A local invalidation is the region's at once (no frame goes out); its completion is
     * queued as the IO thread's next callback, which may be before the completions of sends
     * still on the wire, as the API allows. Posted from another thread, the queuing is a task
     * for the IO thread: only that thread touches its callbacks.
     */
    @Override
    public void postInvalidate(long wrId, MemoryRegion mr) throws RdmaException {
        QpState s = state;
        if (s != QpState.RTS) {
            throw new RdmaException(Errno.ENOTCONN, "queue pair is " + s);
        }
        ownRegion(mr);
        mr.invalidate();
        device.invalidationsPosted.increment();
        if (reactor.inLoop()) {
            wq.completeLocal(wrId, WcOpcode.LOCAL_INV); // the server's path: no task to allocate
        } else {
            reactor.execute(() -> wq.completeLocal(wrId, WcOpcode.LOCAL_INV));
        }
    }

    /** Only where the device is set to ({@link SoftDevice#invalidateAtOnce}): the region's key dies here. */
    @Override
    public boolean invalidateNow(MemoryRegion mr) throws RdmaException {
        ownRegion(mr);
        if (!device.invalidatesAtOnce()) {
            return false;
        }
        mr.invalidate();
        device.invalidationsAtOnce.increment();
        return true;
    }

    /** Refuses a region that is not of this queue pair's protection domain. */
    private void ownRegion(MemoryRegion mr) throws RdmaException {
        QpInit i = init;
        if (!(mr instanceof SoftMr) || i == null || mr.pd() != i.pd()) {
            throw new RdmaException(Errno.EINVAL, "region of another protection domain");
        }
    }

    @Override
    public void postRecv(RecvWr wr) throws RdmaException {
        QpState s = state;
        if (s == QpState.ERROR || s == QpState.CLOSED) {
            throw new RdmaException(Errno.ENOTCONN, "queue pair is " + s);
        }
        QpInit i = init;
        if (wr.sgl().size() > i.maxSge()) {
            throw new RdmaException(Errno.EINVAL, "more than " + i.maxSge() + " SGEs");
        }
        wq.postRecv(wr, i.maxRecvWr());
        requestService();
    }

    @Override
    public void disconnect() {
        reactor.execute(() -> guarded(() -> {
            if (phase == Phase.RTS) {
                tx.control(Wire.DISCONNECT, Wire.ST_OK, 0);
                toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
            } else if (phase == Phase.CONNECTING || phase == Phase.AWAIT_REPLY) {
                toError(new CmEvent(CmEvent.Type.CONNECT_ERROR, Errno.ECONNABORTED, "disconnected while connecting"),
                        true);
            }
        }));
    }

    /** Run {@code r} holding the QP's lock (IO thread work on this QP). */
    void guarded(Runnable r) {
        lock.lock();
        try {
            r.run();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Disconnect and destroy. Outstanding requests complete with WR_FLUSH_ERR before this
     * returns (when called from another thread than the device's); no callback follows.
     */
    @Override
    public void close() {
        if (state == QpState.CLOSED) {
            return;
        }
        reactor.executeAndWait(() -> guarded(this::closeNow));
    }

    private void closeNow() {
        if (phase == Phase.CLOSED) {
            return;
        }
        boolean established = phase == Phase.RTS;
        if (established) {
            tx.control(Wire.DISCONNECT, Wire.ST_OK, 0);
            tx.flushOut();
        }
        toError(established ? CmEvent.of(CmEvent.Type.DISCONNECTED) : null, true);
        changeState(Phase.CLOSED);
        device.forget(this);
    }

    // ---------------------------------------------------------------- IO thread: service

    void requestService() {
        if (serviceQueued.compareAndSet(false, true)) {
            reactor.markDirty(this);
        }
    }

    /** IO thread: take posted work, resume an RNR stall, transmit. */
    void service() {
        lock.lock();
        try {
            serviceLocked();
        } finally {
            lock.unlock();
        }
    }

    private void serviceLocked() {
        serviceQueued.set(false);
        IOException inlineWriteFailed = tx.takeInlineWriteFailure();
        if (inlineWriteFailed != null) {
            LOG.debug("{}: write to {} failed", device.name(), remote, inlineWriteFailed);
            toError(CmEvent.of(CmEvent.Type.DISCONNECTED), true);
        }
        if (phase == Phase.ERROR || phase == Phase.CLOSED) {
            wq.flushAll();
            return;
        }
        wq.takePosted();
        rx.resume();
        if (tx.ackOwed() && wq.sendQ.isEmpty()) {
            tx.flushAcks(); // no answer to carry it
        }
        tx.pump();
    }

    @Override
    public void failed(RuntimeException e) {
        lock.lock();
        try {
            failedLocked(e);
        } finally {
            lock.unlock();
        }
    }

    private void failedLocked(RuntimeException e) {
        toError(CmEvent.of(CmEvent.Type.DISCONNECTED), true);
    }

    @Override
    public void onReady(SelectionKey k) {
        lock.lock();
        try {
            onReadyLocked(k);
        } finally {
            lock.unlock();
        }
    }

    private void onReadyLocked(SelectionKey k) {
        try {
            if (k.isConnectable()) {
                try {
                    if (ch.finishConnect()) {
                        local = localOf(device, ch, null);
                        cm.onConnected();
                    }
                } catch (IOException e) {
                    cm.connectFailed(e);
                    return;
                }
            }
            if (k.isValid() && k.isReadable()) {
                rx.onReadable();
            }
            if (k.isValid() && k.isWritable()) {
                tx.flushOut();
                tx.pump();
            } else if (!tx.pending() && !wq.sendQ.isEmpty()) {
                // the read step's flush finished the pending output: go on with what waited for room
                tx.pump();
            }
        } catch (IOException e) {
            LOG.debug("{}: connection to {} failed", device.name(), remote, e);
            toError(CmEvent.of(CmEvent.Type.DISCONNECTED), true);
        }
    }

    /** Register the socket with this QP's IO thread for {@code ops}. */
    void register(int ops) throws ClosedChannelException {
        key = ch.register(reactor.selector(), ops, this);
    }

    void allocateBuffers() {
        rx.allocate();
        tx.allocate();
    }

    void updateInterest() {
        if (key == null || !key.isValid() || phase == Phase.CONNECTING) {
            return;
        }
        int ops = rx.blocked() ? 0 : SelectionKey.OP_READ;
        if (tx.pending()) {
            ops |= SelectionKey.OP_WRITE;
        }
        if (key.interestOps() != ops) {
            key.interestOps(ops);
        }
    }

    // ---------------------------------------------------------------- errors and completions

    /**
     * Move to ERROR: flush everything outstanding, report {@code event}, and let the
     * connection go (at once, or after the queued frames are out and the peer closed).
     */
    void toError(CmEvent event, boolean hard) {
        if (phase == Phase.ERROR || phase == Phase.CLOSED) {
            if (hard) {
                closeChannel();
            }
            return;
        }
        // an accept in progress (setup hook running) reports the loss itself, once
        boolean unanswered = phase == Phase.REQUESTED;
        changeState(Phase.ERROR);
        rx.abort();
        wq.flushAll();
        if (event != null && !unanswered) {
            emit(event);
        }
        if (hard) {
            closeChannel();
        } else {
            cm.lingerAfterDrain();
        }
    }

    void deviceRemoved() {
        lock.lock();
        try {
            deviceRemovedLocked();
        } finally {
            lock.unlock();
        }
    }

    private void deviceRemovedLocked() {
        toError(new CmEvent(CmEvent.Type.DEVICE_REMOVAL, Errno.ENODEV, "device " + device.name() + " removed"),
                true);
        closeChannel();
    }

    void closeChannel() {
        cm.leaveHandshake();
        if (channelClosed) {
            return;
        }
        channelClosed = true;
        if (key != null) {
            key.cancel();
        }
        SoftDevice.closeQuietly(ch);
        reactor.flushCancelled();
        if (events == null) {
            // never accepted: nobody else owns this connection
            device.forget(this);
        }
    }

    void emit(CmEvent event) {
        CmEventHandler h = events;
        if (h != null) {
            reactor.callback(() -> h.onEvent(this, event));
        }
    }

    /** LOC_PROT_ERR unless every SGE names a live region of this QP's domain (writable if needed). */
    WcStatus checkLocal(List<Sge> sgl, boolean needWrite) {
        for (Sge sge : sgl) {
            if (!(sge.mr() instanceof SoftMr)) {
                return WcStatus.LOC_PROT_ERR;
            }
            SoftMr mr = (SoftMr) sge.mr();
            if (mr.closed() || mr.pd() != init.pd() || (needWrite && !mr.permits(Access.LOCAL_WRITE))) {
                return WcStatus.LOC_PROT_ERR;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "soft-qp[" + local + " -> " + remote + ", " + state + "]";
    }
}
