package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.CmEventHandler;
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
import io.rnbd.rdma.api.WorkCompletion;
import io.rnbd.rdma.api.WrOpcode;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A reliable-connected queue pair over one TCP connection. Both ends are initiator (of
 * their send queue) and target (of the peer's): the target validates every RDMA access
 * against its own device's rkey table, places payload straight into registered memory
 * and acknowledges in order, so the initiator completes its requests in posting order.
 *
 * <p>All fields without a concurrent type are guarded by {@link #lock}. The device's IO
 * thread takes it whenever it works on the QP. Another thread that posts a SEND while the
 * send side is idle takes it too, with a try-lock, and transmits from its own context
 * ({@link #transmitInline}), as siw does for user QPs: at queue depth 1 that saves the
 * wakeup of the IO thread, which was the largest part of the soft provider's latency.
 * Anything else (errors, completions, partial writes) is left to the IO thread, which
 * alone delivers callbacks.
 */
final class SoftQp implements QueuePair, SoftReactor.Channel {
    private static final Logger LOG = LoggerFactory.getLogger(SoftQp.class);
    private static final int IN_SIZE = 64 * 1024;
    private static final int ARENA_SIZE = 64 * 1024;
    private static final int INLINE_MAX = 512;
    private static final int DIRECT_READ_MIN = 16 * 1024;
    private static final int MAX_OUT_SLOTS = 1024;
    private static final int ACK_BATCH = 256;
    private static final long LINGER_NANOS = 5_000_000_000L;
    /** Below the initiator's 30 s connect timeout, so it sees the reject rather than a timeout. */
    private static final long REQUEST_TIMEOUT_NANOS = 25_000_000_000L;
    private static final ByteBuffer[] NO_BUFFERS = new ByteBuffer[0];

    private enum Phase { CONNECTING, AWAIT_REPLY, AWAIT_HELLO, REQUESTED, RTS, ERROR, CLOSED }

    /** A request on the wire, or one that failed locally and completes when its turn comes. */
    private record Sent(SendWr wr, WcStatus localError) {
    }

    private final SoftDevice device;
    private final SoftReactor reactor;
    private final SocketChannel ch;
    private final SoftListener listener;
    private final InetSocketAddress remote;
    private volatile InetSocketAddress local;
    private volatile QpInit init;
    private volatile CmEventHandler events;
    private volatile QpState state = QpState.INIT;

    private final ConcurrentLinkedQueue<SendWr> postedSends = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<RecvWr> postedRecvs = new ConcurrentLinkedQueue<>();
    private final AtomicInteger sendCount = new AtomicInteger();
    private final AtomicInteger recvCount = new AtomicInteger();
    private final AtomicBoolean serviceQueued = new AtomicBoolean();
    private final AtomicBoolean answered = new AtomicBoolean();
    private final ReentrantLock lock = new ReentrantLock();

    // guarded by lock
    private Phase phase;
    private long deadline;
    private SelectionKey key;
    private boolean channelClosed;
    /** A passive connection counted in its source's handshakes until it is established or closed. */
    private boolean inHandshake;
    private byte[] hello;
    private final ArrayDeque<SendWr> sendQ = new ArrayDeque<>();
    private final ArrayDeque<Sent> inflight = new ArrayDeque<>();
    private final ArrayDeque<RecvWr> recvQ = new ArrayDeque<>();
    private boolean localErrorPending;

    private ByteBuffer in;
    private byte curType;
    private int curLen;
    private int curImm;
    /** SEND_INV: the rkey to invalidate when the frame is in. */
    private int curRkey;
    private RecvWr curRecv;
    private int payloadLeft;
    private ByteBuffer[] dst = NO_BUFFERS;
    private int dstIdx;
    private boolean rnrStalled;
    private boolean curAckReq;
    /** The peer's requests received and not yet acknowledged; the next frame out carries them. */
    private int pendingAcks;
    /** One of them asked for an acknowledgement at once (it was posted signaled). */
    private boolean ackOwed;

    private ByteBuffer arena;
    private ByteBuffer[] out = new ByteBuffer[64];
    private int outHead;
    private int outTail;
    private boolean runOpen;
    private boolean shutdownAfterDrain;
    private boolean outputShut;
    /** An inline transmit failed: the IO thread turns it into the error (it owns callbacks). */
    private IOException inlineWriteFailed;

    private SoftQp(SoftDevice device, SoftReactor reactor, SocketChannel ch, SoftListener listener,
                   InetSocketAddress remote) {
        this.device = device;
        this.reactor = reactor;
        this.ch = ch;
        this.listener = listener;
        this.remote = remote;
        try {
            this.local = (InetSocketAddress) ch.getLocalAddress();
        } catch (IOException e) {
            this.local = null;
        }
    }

    static SoftQp active(SoftDevice device, SoftReactor reactor, SocketChannel ch, QpInit init,
                         CmEventHandler events, InetSocketAddress destination, long connectDeadline) {
        SoftQp qp = new SoftQp(device, reactor, ch, null, destination);
        qp.init = init;
        qp.events = events;
        qp.phase = Phase.CONNECTING;
        // set before the device's tick can see the QP (published through the device's QP set)
        qp.deadline = connectDeadline;
        return qp;
    }

    static SoftQp passive(SoftDevice device, SoftReactor reactor, SocketChannel ch, SoftListener listener,
                          long helloDeadline) throws IOException {
        SoftQp qp = new SoftQp(device, reactor, ch, listener, (InetSocketAddress) ch.getRemoteAddress());
        qp.phase = Phase.AWAIT_HELLO;
        qp.inHandshake = true;
        qp.deadline = helloDeadline;
        return qp;
    }

    /** The IO thread this QP lives on. */
    SoftReactor reactor() {
        return reactor;
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
     * is idle ({@link #transmitInline}).
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
        int n = chain.size();
        if (sendCount.addAndGet(n) > i.maxSendWr()) {
            sendCount.addAndGet(-n);
            throw new RdmaException(Errno.ENOMEM, "send queue full (" + i.maxSendWr() + ")");
        }
        postedSends.addAll(chain);
        if (!reactor.inLoop() && transmitInline()) {
            return;
        }
        requestService();
    }

    /**
     * Transmit the posted sends from the caller's thread when the send side is idle (RTS,
     * nothing queued or half-written, no local error waiting). True when everything posted
     * went out and the IO thread need not be woken.
     */
    private boolean transmitInline() {
        if (!lock.tryLock()) {
            return false;
        }
        try {
            if (phase != Phase.RTS || channelClosed || localErrorPending || outHead != outTail || !sendQ.isEmpty()) {
                return false;
            }
            SendWr wr;
            while ((wr = postedSends.peek()) != null) {
                if (arena.remaining() < Wire.HDR + INLINE_MAX || wr.sgl().size() + 1 > MAX_OUT_SLOTS - outTail
                        || checkLocal(wr.sgl(), wr.opcode() == WrOpcode.RDMA_READ) != null) {
                    break; // the IO thread queues it, or fails it with its completion
                }
                postedSends.poll();
                encode(wr);
                inflight.add(new Sent(wr, null));
            }
            if (outHead < outTail) {
                try {
                    ch.write(out, outHead, outTail - outHead);
                } catch (IOException e) {
                    inlineWriteFailed = e;
                    return false;
                }
                while (outHead < outTail && !out[outHead].hasRemaining()) {
                    out[outHead++] = null;
                }
                if (outHead == outTail) {
                    outHead = 0;
                    outTail = 0;
                    arena.clear();
                    runOpen = false;
                }
            }
            // a partial write needs OP_WRITE, a leftover post the queue: the IO thread's job
            return outHead == outTail && postedSends.isEmpty();
        } finally {
            lock.unlock();
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
        if (recvCount.incrementAndGet() > i.maxRecvWr()) {
            recvCount.decrementAndGet();
            throw new RdmaException(Errno.ENOMEM, "receive queue full (" + i.maxRecvWr() + ")");
        }
        postedRecvs.add(wr);
        requestService();
    }

    @Override
    public void disconnect() {
        reactor.execute(() -> guarded(() -> {
            if (phase == Phase.RTS) {
                control(Wire.DISCONNECT, Wire.ST_OK, 0);
                toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
            } else if (phase == Phase.CONNECTING || phase == Phase.AWAIT_REPLY) {
                toError(new CmEvent(CmEvent.Type.CONNECT_ERROR, Errno.ECONNABORTED, "disconnected while connecting"),
                        true);
            }
        }));
    }

    /** Run {@code r} holding the QP's lock (IO thread work on this QP). */
    private void guarded(Runnable r) {
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
            control(Wire.DISCONNECT, Wire.ST_OK, 0);
            flushOut();
        }
        toError(established ? CmEvent.of(CmEvent.Type.DISCONNECTED) : null, true);
        phase = Phase.CLOSED;
        state = QpState.CLOSED;
        device.forget(this);
    }

    // ---------------------------------------------------------------- connection management

    void startConnect(InetSocketAddress destination, byte[] privateData) {
        lock.lock();
        try {
            startConnectLocked(destination, privateData);
        } finally {
            lock.unlock();
        }
    }

    private void startConnectLocked(InetSocketAddress destination, byte[] privateData) {
        if (phase != Phase.CONNECTING) {
            return;
        }
        hello = privateData;
        try {
            key = ch.register(reactor.selector(), SelectionKey.OP_CONNECT, this);
            if (ch.connect(destination)) {
                onConnected();
            }
        } catch (IOException e) {
            connectFailed(e);
        } catch (ClosedSelectorException e) {
            deviceRemoved();
        }
    }

    private void onConnected() {
        allocateBuffers();
        phase = Phase.AWAIT_REPLY;
        int len = hello.length;
        control(Wire.HELLO, Wire.ST_OK, len, Wire.MAGIC, 0);
        if (len > 0) {
            arenaBytes(hello);
        }
        hello = null;
        updateInterest();
        flushOut();
    }

    private void connectFailed(IOException e) {
        CmEvent ev;
        if (e instanceof ConnectException) {
            ev = new CmEvent(CmEvent.Type.UNREACHABLE, Errno.ECONNREFUSED, "nobody listens at " + remote);
        } else if (e instanceof NoRouteToHostException) {
            ev = new CmEvent(CmEvent.Type.UNREACHABLE, Errno.EHOSTUNREACH, "no route to " + remote);
        } else {
            ev = new CmEvent(CmEvent.Type.CONNECT_ERROR, Errno.EIO, "connect to " + remote + " failed: " + e);
        }
        toError(ev, true);
    }

    void registerPassive() throws ClosedChannelException {
        lock.lock();
        try {
            registerPassiveLocked();
        } finally {
            lock.unlock();
        }
    }

    private void registerPassiveLocked() throws ClosedChannelException {
        allocateBuffers();
        key = ch.register(reactor.selector(), SelectionKey.OP_READ, this);
    }

    /**
     * The application accepts ({@link SoftConnectRequest}): from now on the QP takes
     * posts (held until the ACCEPT is out) and reports to {@code handler}.
     */
    void prepare(QpInit qpInit, CmEventHandler handler) {
        this.init = qpInit;
        this.events = handler;
        device.adopt(this);
    }

    /**
     * The setup hook ran: ACCEPT (with {@code privateData}) goes out after every RECV it
     * posted, which the IO thread takes before it reads the initiator's first frame.
     */
    void accepted(byte[] privateData) {
        reactor.execute(() -> guarded(() -> {
            if (phase == Phase.REQUESTED) {
                takePosted();
                control(Wire.ACCEPT, Wire.ST_OK, privateData.length, 0, 0);
                if (privateData.length > 0) {
                    arenaBytes(privateData);
                }
                phase = Phase.RTS;
                state = QpState.RTS;
                leaveHandshake();
                emit(CmEvent.of(CmEvent.Type.ESTABLISHED));
                service();
            } else if (phase != Phase.CLOSED) {
                // toError() said nothing while the request was unanswered: say it now, once
                state = QpState.ERROR;
                emit(new CmEvent(CmEvent.Type.DISCONNECTED, Errno.ECONNRESET, "initiator went away"));
                flushAll();
            }
        }));
    }

    /**
     * The setup hook threw: the QP is destroyed (what the hook posted is dropped without
     * completions, as with ibv_destroy_qp; no event follows) and the initiator rejected.
     */
    void setupFailed(int reason) {
        reactor.execute(() -> guarded(() -> {
            events = null;
            postedRecvs.clear();
            recvQ.clear();
            recvCount.set(0);
            postedSends.clear();
            sendQ.clear();
            sendCount.set(0);
            rejectNow(reason, new byte[0]);
            state = QpState.CLOSED;
            if (channelClosed) {
                device.forget(this);
            }
        }));
    }

    /** Claim the right to answer the connect request (accept/reject, or the provider's own reject). */
    boolean answer() {
        return answered.compareAndSet(false, true);
    }

    void rejected(int reason, byte[] privateData) {
        reactor.execute(() -> guarded(() -> rejectNow(reason, privateData)));
    }

    private void rejectNow(int reason, byte[] privateData) {
        if (phase == Phase.REQUESTED) {
            control(Wire.REJECT, Wire.ST_OK, privateData.length, 0, reason);
            if (privateData.length > 0) {
                arenaBytes(privateData);
            }
            phase = Phase.ERROR;
            state = QpState.ERROR;
            lingerAfterDrain();
        }
    }

    void checkDeadline(long now) {
        lock.lock();
        try {
            checkDeadlineLocked(now);
        } finally {
            lock.unlock();
        }
    }

    private void checkDeadlineLocked(long now) {
        if (now - deadline < 0) {
            return;
        }
        switch (phase) {
            case CONNECTING:
            case AWAIT_REPLY:
                toError(new CmEvent(CmEvent.Type.CONNECT_ERROR, Errno.ETIMEDOUT, "no answer from " + remote), true);
                break;
            case AWAIT_HELLO:
                LOG.info("{}: closing a connection from {}: no connect request within {} ms (handshake.timeout.ms)",
                        device.name(), remote, device.handshake().timeoutMs());
                device.handshakeTimedOut();
                toError(null, true);
                break;
            case REQUESTED:
                if (answer()) {
                    LOG.warn("{}: connect request from {} not answered in time, rejecting", device.name(), remote);
                    rejectNow(Errno.ETIMEDOUT, new byte[0]);
                }
                break;
            case ERROR:
                closeChannel();
                break;
            default:
                break;
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

    // ---------------------------------------------------------------- IO thread: service

    private void requestService() {
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
        if (inlineWriteFailed != null) {
            LOG.debug("{}: write to {} failed", device.name(), remote, inlineWriteFailed);
            inlineWriteFailed = null;
            toError(CmEvent.of(CmEvent.Type.DISCONNECTED), true);
        }
        if (phase == Phase.ERROR || phase == Phase.CLOSED) {
            flushAll();
            return;
        }
        takePosted();
        if (rnrStalled && !recvQ.isEmpty()) {
            rnrStalled = false;
            processInbound();
            updateInterest();
        }
        if (ackOwed && sendQ.isEmpty()) {
            flushAcks(); // no answer to carry it
        }
        pump();
    }

    private void takePosted() {
        RecvWr r;
        while ((r = postedRecvs.poll()) != null) {
            recvQ.add(r);
        }
        SendWr s;
        while ((s = postedSends.poll()) != null) {
            sendQ.add(s);
        }
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
                        local = (InetSocketAddress) ch.getLocalAddress();
                        onConnected();
                    }
                } catch (IOException e) {
                    connectFailed(e);
                    return;
                }
            }
            if (k.isValid() && k.isReadable()) {
                onReadable();
            }
            if (k.isValid() && k.isWritable()) {
                flushOut();
                pump();
            } else if (outHead == outTail && !sendQ.isEmpty()) {
                // the read step's flush finished the pending output: go on with what waited for room
                pump();
            }
        } catch (IOException e) {
            LOG.debug("{}: connection to {} failed", device.name(), remote, e);
            toError(CmEvent.of(CmEvent.Type.DISCONNECTED), true);
        }
    }

    // ---------------------------------------------------------------- IO thread: inbound

    private void onReadable() throws IOException {
        for (int round = 0; round < 16; round++) {
            if (channelClosed) {
                return;
            }
            if (phase == Phase.ERROR || phase == Phase.CLOSED) {
                in.clear();
                int n = ch.read(in);
                in.clear().flip();
                if (n < 0) {
                    closeChannel();
                    return;
                }
                if (n == 0) {
                    break;
                }
                continue;
            }
            if (rnrStalled) {
                // held back: keep noticing the peer going away until the buffer is full
                if (inFull()) {
                    break;
                }
                in.compact();
                int n = ch.read(in);
                in.flip();
                if (n < 0) {
                    onEof();
                    return;
                }
                if (n == 0) {
                    break;
                }
                continue;
            }
            if (payloadLeft >= DIRECT_READ_MIN && !in.hasRemaining() && dst != null) {
                int wanted = payloadLeft;
                long n = ch.read(dst, dstIdx, dst.length - dstIdx);
                if (n < 0) {
                    onEof();
                    return;
                }
                if (n == 0) {
                    break;
                }
                payloadLeft -= (int) n;
                while (dstIdx < dst.length && !dst[dstIdx].hasRemaining()) {
                    dstIdx++;
                }
                if (payloadLeft == 0) {
                    finishFrame();
                }
                if (n < wanted) {
                    break; // the socket is drained: spare the read that would say so
                }
                continue;
            }
            in.compact();
            int space = in.remaining();
            int n = ch.read(in);
            in.flip();
            if (n < 0) {
                processInbound();
                onEof();
                return;
            }
            if (n == 0) {
                break;
            }
            processInbound();
            if (n < space) {
                // drained (a short read); the selector is level-triggered, so whatever
                // arrives meanwhile is reported at once: spare the read that returns 0
                break;
            }
        }
        if (ackOwed) {
            // written by service(), which the reactor runs after this step's callbacks: an
            // answer they post carries the acknowledgement, and the peer wakes once
            requestService();
        }
        updateInterest();
        flushOut();
    }

    private void onEof() {
        if (phase == Phase.CONNECTING || phase == Phase.AWAIT_REPLY) {
            toError(new CmEvent(CmEvent.Type.CONNECT_ERROR, Errno.ECONNRESET, "peer closed while connecting"), true);
        } else {
            toError(CmEvent.of(CmEvent.Type.DISCONNECTED), true);
        }
        closeChannel();
    }

    private void processInbound() {
        while (phase != Phase.ERROR && phase != Phase.CLOSED) {
            if (payloadLeft > 0) {
                if (!in.hasRemaining()) {
                    return;
                }
                copyPayload();
                if (payloadLeft > 0) {
                    return;
                }
                finishFrame();
                continue;
            }
            if (in.remaining() < Wire.HDR) {
                return;
            }
            if (!onHeader(in.position())) {
                return;
            }
        }
    }

    private void copyPayload() {
        while (payloadLeft > 0 && in.hasRemaining()) {
            int n = Math.min(payloadLeft, in.remaining());
            if (dst == null) {
                in.position(in.position() + n);
            } else {
                ByteBuffer d = dst[dstIdx];
                n = Math.min(n, d.remaining());
                int lim = in.limit();
                in.limit(in.position() + n);
                d.put(in);
                in.limit(lim);
                while (dstIdx < dst.length && !dst[dstIdx].hasRemaining()) {
                    dstIdx++;
                }
            }
            payloadLeft -= n;
        }
    }

    /** Handle the header at {@code p}; false (header left unconsumed) when the frame must wait. */
    private boolean onHeader(int p) {
        byte type = Wire.type(in, p);
        int len = Wire.len(in, p);
        if (Wire.hasPayload(type) && (len < 0 || len > SoftDevice.ATTRIBUTES.maxMrSize())) {
            return protocolError("bad payload length " + len);
        }
        if (!allowedNow(type)) {
            return protocolError("unexpected frame type " + type + " in phase " + phase);
        }
        if ((Wire.flags(in, p) & ~Wire.ACK_REQ) != 0) {
            return protocolError("unknown flags " + Wire.flags(in, p));
        }
        int acked = Wire.acked(in, p);
        if (acked != 0) {
            if (phase != Phase.RTS || !acknowledged(acked)) {
                return protocolError("acknowledgement of " + acked + " requests, " + inflight.size() + " outstanding");
            }
            // taken once: a frame that waits for a RECV has its header parsed again
            Wire.clearAcked(in, p);
            completeLocalErrors();
            if (phase != Phase.RTS) {
                return false;
            }
        }
        switch (type) {
            case Wire.SEND:
            case Wire.SEND_IMM:
            case Wire.SEND_INV:
                return onSend(p, type, len);
            case Wire.WRITE:
            case Wire.WRITE_IMM:
                return onWrite(p, type, len);
            case Wire.READ_REQ:
                in.position(p + Wire.HDR);
                onReadRequest(Wire.addr(in, p), Wire.rkey(in, p), Wire.aux(in, p));
                return true;
            case Wire.READ_RESP:
                in.position(p + Wire.HDR);
                return onReadResponse(Wire.status(in, p), len);
            case Wire.ACK:
                in.position(p + Wire.HDR);
                return onAckFrame(Wire.status(in, p));
            case Wire.DISCONNECT:
                in.position(p + Wire.HDR);
                toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
                return true;
            case Wire.HELLO:
                if (Wire.addr(in, p) != Wire.MAGIC) {
                    return protocolError("bad hello (magic " + Long.toHexString(Wire.addr(in, p)) + ")");
                }
                return onPrivateDataFrame(p, type, len);
            case Wire.ACCEPT:
            case Wire.REJECT:
                return onPrivateDataFrame(p, type, len);
            default:
                return protocolError("unknown frame type " + type);
        }
    }

    /** HELLO, ACCEPT, REJECT: the private data is read into a heap buffer, bounded by the IB CM's sizes. */
    private boolean onPrivateDataFrame(int p, byte type, int len) {
        if (len > Wire.maxPrivateData(type)) {
            return protocolError("frame type " + type + " with " + len + " bytes of private data, at most "
                    + Wire.maxPrivateData(type));
        }
        in.position(p + Wire.HDR);
        // REJECT's reason travels in aux; it is kept in curImm until the private data is in
        startFrame(type, len, Wire.aux(in, p), null, new ByteBuffer[] {ByteBuffer.allocate(len)});
        return true;
    }

    private boolean allowedNow(byte type) {
        switch (phase) {
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

    private boolean protocolError(String what) {
        LOG.warn("{}: protocol error from {}: {}", device.name(), remote, what);
        toError(phase == Phase.AWAIT_REPLY
                ? new CmEvent(CmEvent.Type.CONNECT_ERROR, Errno.EPROTO, "bad answer from " + remote + ": " + what)
                : CmEvent.of(CmEvent.Type.DISCONNECTED), true);
        return false;
    }

    private boolean onSend(int p, byte type, int len) {
        if (!haveRecv()) {
            return false;
        }
        in.position(p + Wire.HDR);
        RecvWr r = recvQ.poll();
        WcStatus bad = checkLocal(r.sgl(), true);
        if (bad == null && len > r.totalLength()) {
            bad = WcStatus.LOC_LEN_ERR;
        }
        if (bad != null) {
            completeRecv(r, bad, WcOpcode.RECV, 0, false, 0);
            nak(Wire.ST_REM_OP);
            toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
            return true;
        }
        curAckReq = (Wire.flags(in, p) & Wire.ACK_REQ) != 0;
        startFrame(type, len, type == Wire.SEND_IMM ? Wire.imm(in, p) : 0, Wire.rkey(in, p), r,
                slices(r.sgl(), len));
        return true;
    }

    private boolean onWrite(int p, byte type, int len) {
        long addr = Wire.addr(in, p);
        int rkey = Wire.rkey(in, p);
        // a zero-length WRITE touches no memory: as on adapters its address and rkey are not
        // checked (Linux's RTRS sends heartbeats and IO responses as empty WRITE_WITH_IMM, rkey 0)
        SoftMr mr = len == 0 ? null : device.lookup(rkey);
        if (len != 0 && (mr == null || mr.pd() != init.pd() || !mr.allows(rkey, Access.REMOTE_WRITE, addr, len))) {
            in.position(p + Wire.HDR);
            nak(Wire.ST_REM_ACCESS);
            toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
            return true;
        }
        RecvWr r = null;
        if (type == Wire.WRITE_IMM) {
            if (!haveRecv()) {
                return false;
            }
            r = recvQ.poll();
        }
        in.position(p + Wire.HDR);
        curAckReq = (Wire.flags(in, p) & Wire.ACK_REQ) != 0;
        startFrame(type, len, Wire.imm(in, p), r,
                len == 0 ? NO_BUFFERS : new ByteBuffer[] {mr.slice((int) (addr - mr.address()), len)});
        return true;
    }

    private boolean haveRecv() {
        if (recvQ.isEmpty()) {
            takePosted();
            if (recvQ.isEmpty()) {
                // receiver not ready: stop reading this connection until a RECV is posted
                rnrStalled = true;
                return false;
            }
        }
        return true;
    }

    private void onReadRequest(long addr, int rkey, int len) {
        if (len == 0) {
            // like a zero-length WRITE: no memory, no rkey check
            control(Wire.READ_RESP, Wire.ST_OK, 0, 0, 0);
            return;
        }
        SoftMr mr = device.lookup(rkey);
        if (mr == null || len < 0 || mr.pd() != init.pd() || !mr.allows(rkey, Access.REMOTE_READ, addr, len)) {
            control(Wire.READ_RESP, Wire.ST_REM_ACCESS, 0);
            toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
            return;
        }
        control(Wire.READ_RESP, Wire.ST_OK, len, 0, 0);
        if (len > 0) {
            gather(mr.slice((int) (addr - mr.address()), len));
        }
    }

    private boolean onReadResponse(byte status, int len) {
        Sent head = inflight.peek();
        if (head == null || head.localError() != null || head.wr().opcode() != WrOpcode.RDMA_READ) {
            return protocolError("read response without a read");
        }
        if (status != Wire.ST_OK) {
            inflight.poll();
            completeSend(head, WcStatus.REM_ACCESS_ERR);
            toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
            return true;
        }
        if (len != head.wr().totalLength()) {
            return protocolError("read response of " + len + " bytes for a read of " + head.wr().totalLength());
        }
        startFrame(Wire.READ_RESP, len, 0, null, slices(head.wr().sgl(), len));
        return true;
    }

    /** The peer placed the next {@code count} of our SENDs and WRITEs: complete them, in order. */
    private boolean acknowledged(int count) {
        for (int i = 0; i < count; i++) {
            Sent head = inflight.peek();
            if (head == null || head.localError() != null || head.wr().opcode() == WrOpcode.RDMA_READ) {
                return false;
            }
            inflight.poll();
            completeSend(head, WcStatus.SUCCESS);
        }
        return true;
    }

    /** An ACK frame: its acknowledgements are taken; a status fails the request after them. */
    private boolean onAckFrame(byte status) {
        if (status != Wire.ST_OK) {
            Sent head = inflight.poll();
            if (head == null || head.localError() != null) {
                return protocolError("negative acknowledgement without a request");
            }
            completeSend(head, status == Wire.ST_REM_ACCESS ? WcStatus.REM_ACCESS_ERR : WcStatus.REM_OP_ERR);
            toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
        }
        return true;
    }

    private void startFrame(byte type, int len, int imm, RecvWr recv, ByteBuffer[] into) {
        startFrame(type, len, imm, 0, recv, into);
    }

    private void startFrame(byte type, int len, int imm, int rkey, RecvWr recv, ByteBuffer[] into) {
        curRkey = rkey;
        curType = type;
        curLen = len;
        curImm = imm;
        curRecv = recv;
        dst = into;
        dstIdx = 0;
        while (dstIdx < dst.length && !dst[dstIdx].hasRemaining()) {
            dstIdx++;
        }
        payloadLeft = len;
        if (len == 0) {
            finishFrame();
        }
    }

    private void finishFrame() {
        switch (curType) {
            case Wire.SEND:
                completeRecv(curRecv, WcStatus.SUCCESS, WcOpcode.RECV, curLen, false, 0);
                ack();
                break;
            case Wire.SEND_IMM:
                completeRecv(curRecv, WcStatus.SUCCESS, WcOpcode.RECV, curLen, true, curImm);
                ack();
                break;
            case Wire.WRITE:
                ack();
                break;
            case Wire.WRITE_IMM:
                completeRecv(curRecv, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, curLen, true, curImm);
                ack();
                break;
            case Wire.READ_RESP:
                completeSend(inflight.poll(), WcStatus.SUCCESS);
                completeLocalErrors();
                break;
            case Wire.SEND_INV:
                finishSendInvalidate();
                break;
            case Wire.HELLO:
                onHello(dst[0].array());
                break;
            case Wire.ACCEPT:
                phase = Phase.RTS;
                state = QpState.RTS;
                emit(new CmEvent(CmEvent.Type.ESTABLISHED, 0, "established", dst[0].array()));
                pump();
                break;
            case Wire.REJECT:
                toError(new CmEvent(CmEvent.Type.REJECTED, curImm, "rejected by peer: " + Errno.name(curImm),
                        dst[0].array()), true);
                break;
            default:
                break;
        }
        curType = 0;
        curRecv = null;
        dst = NO_BUFFERS;
        dstIdx = 0;
    }

    /**
     * The end of a SEND_WITH_INV: the region under the rkey it names is invalidated, and
     * the RECV completes with that rkey. Only a live rkey of a region in this QP's
     * protection domain can be (on adapters only fast-registered regions and windows):
     * anything else is IB's class J responder error, which rxe handles so: the message is
     * acknowledged (the sender's request succeeds), the RECV fails and the QP goes to
     * ERROR, which here also disconnects, so the sender's later requests flush.
     */
    private void finishSendInvalidate() {
        SoftMr mr = device.lookup(curRkey);
        if (mr != null && mr.pd() == init.pd() && mr.remoteInvalidate(curRkey)) {
            completeRecv(curRecv, WcStatus.SUCCESS, WcOpcode.RECV, curLen, false, 0, curRkey);
            ack();
            return;
        }
        LOG.debug("{}: SEND_WITH_INV from {} names rkey {} that this QP cannot invalidate", device.name(), remote,
                Integer.toHexString(curRkey));
        completeRecv(curRecv, WcStatus.REM_OP_ERR, WcOpcode.RECV, 0, false, 0);
        ack();
        control(Wire.ACK, Wire.ST_OK, 0); // carries this request's acknowledgement before the QP stops
        toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
    }

    private void onHello(byte[] privateData) {
        if (listener.closed()) {
            toError(null, true);
            return;
        }
        phase = Phase.REQUESTED;
        deadline = device.nanos() + REQUEST_TIMEOUT_NANOS;
        SoftConnectRequest request = new SoftConnectRequest(device, this, privateData);
        reactor.callback(() -> {
            try {
                listener.handler().onConnectRequest(request);
            } catch (RuntimeException e) {
                LOG.warn("{}: connect request handler failed, rejecting {}", device.name(), remote, e);
                if (answer()) {
                    guarded(() -> rejectNow(Errno.ECONNREFUSED, new byte[0]));
                }
            }
        });
    }

    private void ack() {
        ackOwed |= curAckReq;
        if (++pendingAcks >= ACK_BATCH) {
            flushAcks();
        }
    }

    /** An ACK frame for what is pending (any frame out would carry it as well). */
    private void flushAcks() {
        if (pendingAcks > 0 && phase == Phase.RTS) {
            control(Wire.ACK, Wire.ST_OK, 0);
        }
        pendingAcks = 0;
        ackOwed = false;
    }

    private void nak(byte status) {
        control(Wire.ACK, status, 0);
    }

    // ---------------------------------------------------------------- IO thread: outbound

    private void allocateBuffers() {
        in = ByteBuffer.allocateDirect(IN_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        in.flip();
        arena = ByteBuffer.allocateDirect(ARENA_SIZE).order(ByteOrder.LITTLE_ENDIAN);
    }

    private void pump() {
        if (phase != Phase.RTS) {
            return;
        }
        takePosted();
        do {
            while (!localErrorPending && !sendQ.isEmpty()) {
                SendWr wr = sendQ.peek();
                if (arena.remaining() < Wire.HDR + INLINE_MAX
                        || outTail - outHead + wr.sgl().size() + 1 > MAX_OUT_SLOTS) {
                    break;
                }
                sendQ.poll();
                WcStatus bad = checkLocal(wr.sgl(), wr.opcode() == WrOpcode.RDMA_READ);
                if (bad != null) {
                    inflight.add(new Sent(wr, bad));
                    localErrorPending = true;
                    completeLocalErrors();
                    break;
                }
                encode(wr);
                inflight.add(new Sent(wr, null));
            }
            flushOut();
            // a full write frees the whole arena: keep going while the socket takes everything
        } while (phase == Phase.RTS && !localErrorPending && !sendQ.isEmpty() && outHead == outTail
                && !channelClosed);
    }

    private void encode(SendWr wr) {
        int len = (int) wr.totalLength();
        // a signaled request completes on its ACK: ask for it now; an unsignaled one's ACK may wait
        byte f = wr.signaled() ? Wire.ACK_REQ : 0;
        switch (wr.opcode()) {
            case SEND:
                control(Wire.SEND, Wire.ST_OK, f, len, 0, 0, 0, 0);
                break;
            case SEND_WITH_IMM:
                control(Wire.SEND_IMM, Wire.ST_OK, f, len, 0, 0, wr.imm(), 0);
                break;
            case SEND_WITH_INV:
                // ibv_send_wr keeps invalidate_rkey where imm_data is: so does SendWr
                control(Wire.SEND_INV, Wire.ST_OK, f, len, 0, wr.imm(), 0, 0);
                break;
            case RDMA_WRITE:
                control(Wire.WRITE, Wire.ST_OK, f, len, wr.remoteAddr(), wr.rkey(), 0, 0);
                break;
            case RDMA_WRITE_WITH_IMM:
                control(Wire.WRITE_IMM, Wire.ST_OK, f, len, wr.remoteAddr(), wr.rkey(), wr.imm(), 0);
                break;
            case RDMA_READ:
                control(Wire.READ_REQ, Wire.ST_OK, (byte) 0, 0, wr.remoteAddr(), wr.rkey(), 0, len);
                return;
            default:
                throw new IllegalStateException("opcode " + wr.opcode());
        }
        if (len == 0) {
            return;
        }
        if (len <= INLINE_MAX) {
            openRun();
            for (Sge sge : wr.sgl()) {
                arena.put(((SoftMr) sge.mr()).slice(sge.offset(), sge.length()));
            }
            extendRun();
        } else {
            for (Sge sge : wr.sgl()) {
                if (sge.length() > 0) {
                    gather(((SoftMr) sge.mr()).slice(sge.offset(), sge.length()));
                }
            }
        }
    }

    private void control(byte type, byte status, int aux) {
        control(type, status, (byte) 0, 0, 0, 0, 0, aux);
    }

    private void control(byte type, byte status, int len, long addr, int aux) {
        control(type, status, (byte) 0, len, addr, 0, 0, aux);
    }

    /** Queue a header; it carries every acknowledgement pending so far. */
    private void control(byte type, byte status, byte flags, int len, long addr, int rkey, int imm, int aux) {
        int acked = pendingAcks;
        pendingAcks = 0;
        ackOwed = false;
        if (arena.remaining() >= Wire.HDR) {
            openRun();
            Wire.put(arena, type, status, flags, len, addr, rkey, imm, aux, acked);
            extendRun();
        } else {
            // arena exhausted by a burst of responses: a one-off header keeps order without blocking
            ByteBuffer b = ByteBuffer.allocate(Wire.HDR).order(ByteOrder.LITTLE_ENDIAN);
            Wire.put(b, type, status, flags, len, addr, rkey, imm, aux, acked);
            gather(b.flip());
        }
    }

    private void arenaBytes(byte[] bytes) {
        openRun();
        arena.put(bytes);
        extendRun();
    }

    private void openRun() {
        if (!runOpen) {
            ByteBuffer run = arena.duplicate();
            run.limit(arena.position());
            addOut(run);
            runOpen = true;
        }
    }

    private void extendRun() {
        out[outTail - 1].limit(arena.position());
    }

    private void gather(ByteBuffer b) {
        addOut(b);
        runOpen = false;
    }

    private void addOut(ByteBuffer b) {
        if (outTail == out.length) {
            if (outHead > 0) {
                System.arraycopy(out, outHead, out, 0, outTail - outHead);
                Arrays.fill(out, outTail - outHead, outTail, null);
                outTail -= outHead;
                outHead = 0;
            } else {
                out = Arrays.copyOf(out, out.length * 2);
            }
        }
        out[outTail++] = b;
    }

    private void flushOut() {
        if (channelClosed) {
            return;
        }
        if (outHead < outTail) {
            try {
                ch.write(out, outHead, outTail - outHead);
            } catch (IOException e) {
                LOG.debug("{}: write to {} failed", device.name(), remote, e);
                toError(CmEvent.of(CmEvent.Type.DISCONNECTED), true);
                return;
            }
            while (outHead < outTail && !out[outHead].hasRemaining()) {
                out[outHead++] = null;
            }
        }
        if (outHead == outTail) {
            outHead = 0;
            outTail = 0;
            if (arena != null) {
                arena.clear();
            }
            runOpen = false;
            if (shutdownAfterDrain && !outputShut) {
                outputShut = true;
                try {
                    ch.shutdownOutput();
                } catch (IOException e) {
                    closeChannel();
                    return;
                }
            }
        }
        updateInterest();
    }

    private boolean inFull() {
        return in != null && in.position() == 0 && in.limit() == in.capacity();
    }

    private void updateInterest() {
        if (key == null || !key.isValid() || phase == Phase.CONNECTING) {
            return;
        }
        int ops = rnrStalled && inFull() ? 0 : SelectionKey.OP_READ;
        if (outHead < outTail) {
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
    private void toError(CmEvent event, boolean hard) {
        if (phase == Phase.ERROR || phase == Phase.CLOSED) {
            if (hard) {
                closeChannel();
            }
            return;
        }
        // an accept in progress (setup hook running) reports the loss itself, once
        boolean unanswered = phase == Phase.REQUESTED;
        phase = Phase.ERROR;
        state = QpState.ERROR;
        rnrStalled = false;
        payloadLeft = 0;
        dst = NO_BUFFERS;
        flushAll();
        if (event != null && !unanswered) {
            emit(event);
        }
        if (hard) {
            closeChannel();
        } else {
            lingerAfterDrain();
        }
    }

    private void lingerAfterDrain() {
        shutdownAfterDrain = true;
        deadline = device.nanos() + LINGER_NANOS;
        if (in != null) {
            in.clear().flip();
        }
        flushOut();
    }

    private void flushAll() {
        takePosted();
        Sent s;
        while ((s = inflight.poll()) != null) {
            completeSend(s, s.localError() != null ? s.localError() : WcStatus.WR_FLUSH_ERR);
        }
        SendWr w;
        while ((w = sendQ.poll()) != null) {
            completeSend(new Sent(w, null), WcStatus.WR_FLUSH_ERR);
        }
        RecvWr r;
        while ((r = recvQ.poll()) != null) {
            completeRecv(r, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0);
        }
    }

    private void completeLocalErrors() {
        Sent head = inflight.peek();
        if (head != null && head.localError() != null) {
            inflight.poll();
            completeSend(head, head.localError());
            toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
        }
    }

    private void leaveHandshake() {
        if (inHandshake) {
            inHandshake = false;
            device.leftHandshake(remote.getAddress());
        }
    }

    private void closeChannel() {
        leaveHandshake();
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

    private void completeSend(Sent s, WcStatus status) {
        sendCount.decrementAndGet();
        SendWr wr = s.wr();
        if (status == WcStatus.SUCCESS && !wr.signaled()) {
            return;
        }
        WcOpcode op;
        switch (wr.opcode()) {
            case RDMA_WRITE:
            case RDMA_WRITE_WITH_IMM:
                op = WcOpcode.RDMA_WRITE;
                break;
            case RDMA_READ:
                op = WcOpcode.RDMA_READ;
                break;
            default:
                op = WcOpcode.SEND;
                break;
        }
        int len = status == WcStatus.SUCCESS ? (int) wr.totalLength() : 0;
        deliver(new WorkCompletion(wr.wrId(), status, op, len, false, 0));
    }

    private void completeRecv(RecvWr r, WcStatus status, WcOpcode op, int len, boolean hasImm, int imm) {
        completeRecv(r, status, op, len, hasImm, imm, null);
    }

    private void completeRecv(RecvWr r, WcStatus status, WcOpcode op, int len, boolean hasImm, int imm,
                              Integer invalidatedRkey) {
        recvCount.decrementAndGet();
        deliver(new WorkCompletion(r.wrId(), status, op, len, hasImm, imm, invalidatedRkey));
    }

    private void deliver(WorkCompletion wc) {
        QpInit i = init;
        if (i != null) {
            reactor.callback(() -> i.completions().onCompletion(this, wc));
        }
    }

    private void emit(CmEvent event) {
        CmEventHandler h = events;
        if (h != null) {
            reactor.callback(() -> h.onEvent(this, event));
        }
    }

    /** LOC_PROT_ERR unless every SGE names a live region of this QP's domain (writable if needed). */
    private WcStatus checkLocal(List<Sge> sgl, boolean needWrite) {
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

    /** Views of the SGEs covering exactly {@code len} bytes. */
    private static ByteBuffer[] slices(List<Sge> sgl, int len) {
        ByteBuffer[] views = new ByteBuffer[sgl.size()];
        int left = len;
        for (int i = 0; i < views.length; i++) {
            Sge sge = sgl.get(i);
            int n = Math.min(left, sge.length());
            views[i] = ((SoftMr) sge.mr()).slice(sge.offset(), n);
            left -= n;
        }
        return views;
    }

    @Override
    public String toString() {
        return "soft-qp[" + local + " -> " + remote + ", " + state + "]";
    }
}
