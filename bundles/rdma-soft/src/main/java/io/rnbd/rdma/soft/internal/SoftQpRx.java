package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.common.Errno;
import io.rnbd.rdma.api.RecvWr;
import io.rnbd.rdma.api.WcOpcode;
import io.rnbd.rdma.api.WcStatus;
import io.rnbd.rdma.api.WrOpcode;
import io.rnbd.rdma.soft.internal.SoftQp.Phase;
import io.rnbd.rdma.soft.internal.SoftQpQueues.Sent;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * A queue pair's receive side (siw's {@code siw_qp_rx.c}): reads the peer's frames,
 * checks each against the phase and, for RDMA accesses, against this device's rkey
 * table and the QP's protection domain, places payload straight into the RECV's or the
 * target region's memory, and takes the acknowledgements and READ responses that
 * complete this side's requests. A SEND that finds no RECV stalls the stream (RNR) until
 * one is posted. All state is guarded by the QP's lock; IO thread only.
 */
final class SoftQpRx {
    /** The QP's logger: its parts log as the QP always did. */
    private static final Logger LOG = LoggerFactory.getLogger(SoftQp.class);
    static final int IN_SIZE = 64 * 1024;
    private static final int DIRECT_READ_MIN = 16 * 1024;
    private static final ByteBuffer[] NO_BUFFERS = new ByteBuffer[0];

    private final SoftQp qp;
    private final SocketChannel ch;
    private final SoftQpQueues wq;
    private final SoftQpTx tx;
    private final SoftQpCm cm;
    private final SoftMemTable mem;

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
    /**
     * The last frame begun carried a large payload, so the next is likely large too (a run of
     * 128 KiB writes, or of read answers): the next staging read takes its header alone, and
     * its payload goes straight into its place by the direct read, instead of up to
     * {@link #IN_SIZE} of it through {@link #in} and a copy. Small frames (SENDs, acks) still
     * come many to a read.
     */
    private boolean peekNext;
    /** Payload bytes that came through {@link #in} and were copied to their destination. */
    private long stagedPayloadBytes;

    SoftQpRx(SoftQp qp, SocketChannel ch, SoftQpQueues wq, SoftQpTx tx, SoftQpCm cm, SoftMemTable mem) {
        this.qp = qp;
        this.ch = ch;
        this.wq = wq;
        this.tx = tx;
        this.cm = cm;
        this.mem = mem;
    }

    void allocate() {
        in = ByteBuffer.allocateDirect(IN_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        in.flip();
    }

    void onReadable() throws IOException {
        for (int round = 0; round < 16; round++) {
            if (qp.channelClosed) {
                return;
            }
            if (qp.phase == Phase.ERROR || qp.phase == Phase.CLOSED) {
                in.clear();
                int n = ch.read(in);
                in.clear().flip();
                if (n < 0) {
                    qp.closeChannel();
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
                    cm.peerClosed();
                    return;
                }
                if (n == 0) {
                    break;
                }
                continue;
            }
            if (payloadLeft > 0 && curLen >= DIRECT_READ_MIN && !in.hasRemaining() && dst != null) {
                // a large frame's payload, to its last byte, straight into its place (the
                // staging buffer would take its tail with the next header and much of its payload)
                int wanted = payloadLeft;
                long n = ch.read(dst, dstIdx, dst.length - dstIdx);
                if (n < 0) {
                    cm.peerClosed();
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
            int capacity = in.limit();
            if (peekNext && payloadLeft == 0 && in.position() < Wire.HDR) {
                in.limit(Wire.HDR); // the rest of the next header, nothing past it
            }
            int space = in.remaining();
            int n = ch.read(in);
            in.limit(capacity).flip();
            if (n < 0) {
                processInbound();
                cm.peerClosed();
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
        if (tx.ackOwed()) {
            // written by service(), which the reactor runs after this step's callbacks: an
            // answer they post carries the acknowledgement, and the peer wakes once
            qp.requestService();
        }
        qp.updateInterest();
        tx.flushOut();
    }

    /** A RECV was posted: go on with the frame that waited for one (RNR). */
    void resume() {
        if (rnrStalled && !wq.recvQ.isEmpty()) {
            rnrStalled = false;
            processInbound();
            qp.updateInterest();
        }
    }

    /** Stalled for a RECV with the input buffer full: stop reading until one is posted. */
    boolean blocked() {
        return rnrStalled && inFull();
    }

    /** Payload bytes copied out of the staging buffer so far (the rest was read in place). */
    long stagedPayloadBytes() {
        return stagedPayloadBytes;
    }

    /** The QP failed: drop the frame in progress and any stall. */
    void abort() {
        rnrStalled = false;
        payloadLeft = 0;
        dst = NO_BUFFERS;
    }

    /** Lingering: what was read and not yet processed is dropped. */
    void discard() {
        if (in != null) {
            in.clear().flip();
        }
    }

    private void processInbound() {
        while (qp.phase != Phase.ERROR && qp.phase != Phase.CLOSED) {
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
                stagedPayloadBytes += n;
                while (dstIdx < dst.length && !dst[dstIdx].hasRemaining()) {
                    dstIdx++;
                }
            }
            payloadLeft -= n;
        }
    }

    /** Handle the header at {@code p}; false (header left unconsumed) when the frame must wait. */
    private boolean onHeader(int p) {
        peekNext = false; // until a large payload begins (startFrame)
        byte type = Wire.type(in, p);
        int len = Wire.len(in, p);
        if (Wire.hasPayload(type) && (len < 0 || len > SoftDevice.ATTRIBUTES.maxMrSize())) {
            return protocolError("bad payload length " + len);
        }
        if (!qp.phase.admits(type)) {
            return protocolError("unexpected frame type " + type + " in phase " + qp.phase);
        }
        if ((Wire.flags(in, p) & ~Wire.ACK_REQ) != 0) {
            return protocolError("unknown flags " + Wire.flags(in, p));
        }
        int acked = Wire.acked(in, p);
        if (acked != 0) {
            if (qp.phase != Phase.RTS || !wq.acknowledged(acked)) {
                return protocolError("acknowledgement of " + acked + " requests, " + wq.inflight.size()
                        + " outstanding");
            }
            // taken once: a frame that waits for a RECV has its header parsed again
            Wire.clearAcked(in, p);
            wq.completeLocalErrors();
            if (qp.phase != Phase.RTS) {
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
                tx.readResponse(Wire.addr(in, p), Wire.rkey(in, p), Wire.aux(in, p));
                return true;
            case Wire.READ_RESP:
                in.position(p + Wire.HDR);
                return onReadResponse(Wire.status(in, p), len);
            case Wire.ACK:
                in.position(p + Wire.HDR);
                return onAckFrame(Wire.status(in, p));
            case Wire.DISCONNECT:
                in.position(p + Wire.HDR);
                qp.toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
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

    private boolean protocolError(String what) {
        LOG.warn("{}: protocol error from {}: {}", qp.device.name(), qp.remote, what);
        qp.toError(qp.phase == Phase.AWAIT_REPLY
                ? new CmEvent(CmEvent.Type.CONNECT_ERROR, Errno.EPROTO, "bad answer from " + qp.remote + ": " + what)
                : CmEvent.of(CmEvent.Type.DISCONNECTED), true);
        return false;
    }

    private boolean onSend(int p, byte type, int len) {
        if (!haveRecv()) {
            return false;
        }
        in.position(p + Wire.HDR);
        RecvWr r = wq.recvQ.poll();
        WcStatus bad = qp.checkLocal(r.sgl(), true);
        if (bad == null && len > r.totalLength()) {
            bad = WcStatus.LOC_LEN_ERR;
        }
        if (bad != null) {
            wq.completeRecv(r, bad, WcOpcode.RECV, 0, false, 0);
            nak(Wire.ST_REM_OP);
            qp.toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
            return true;
        }
        curAckReq = (Wire.flags(in, p) & Wire.ACK_REQ) != 0;
        startFrame(type, len, type == Wire.SEND_IMM ? Wire.imm(in, p) : 0, Wire.rkey(in, p), r,
                SoftMr.slices(r.sgl(), len));
        return true;
    }

    private boolean onWrite(int p, byte type, int len) {
        long addr = Wire.addr(in, p);
        int rkey = Wire.rkey(in, p);
        // a zero-length WRITE touches no memory: as on adapters its address and rkey are not
        // checked (Linux's RTRS sends heartbeats and IO responses as empty WRITE_WITH_IMM, rkey 0)
        SoftMr mr = len == 0 ? null : mem.lookup(rkey);
        if (len != 0 && (mr == null || mr.pd() != qp.init.pd() || !mr.allows(rkey, Access.REMOTE_WRITE, addr, len))) {
            in.position(p + Wire.HDR);
            nak(Wire.ST_REM_ACCESS);
            qp.toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
            return true;
        }
        RecvWr r = null;
        if (type == Wire.WRITE_IMM) {
            if (!haveRecv()) {
                return false;
            }
            r = wq.recvQ.poll();
        }
        in.position(p + Wire.HDR);
        curAckReq = (Wire.flags(in, p) & Wire.ACK_REQ) != 0;
        startFrame(type, len, Wire.imm(in, p), r,
                len == 0 ? NO_BUFFERS : new ByteBuffer[] {mr.slice((int) (addr - mr.address()), len)});
        return true;
    }

    private boolean haveRecv() {
        if (wq.recvQ.isEmpty()) {
            wq.takePosted();
            if (wq.recvQ.isEmpty()) {
                // receiver not ready: stop reading this connection until a RECV is posted
                rnrStalled = true;
                return false;
            }
        }
        return true;
    }

    private boolean onReadResponse(byte status, int len) {
        Sent head = wq.inflight.peek();
        if (head == null || head.localError() != null || head.wr().opcode() != WrOpcode.RDMA_READ) {
            return protocolError("read response without a read");
        }
        if (status != Wire.ST_OK) {
            wq.inflight.poll();
            wq.completeSend(head, WcStatus.REM_ACCESS_ERR);
            qp.toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
            return true;
        }
        if (len != head.wr().totalLength()) {
            return protocolError("read response of " + len + " bytes for a read of " + head.wr().totalLength());
        }
        startFrame(Wire.READ_RESP, len, 0, null, SoftMr.slices(head.wr().sgl(), len));
        return true;
    }

    /** An ACK frame: its acknowledgements are taken; a status fails the request after them. */
    private boolean onAckFrame(byte status) {
        if (status != Wire.ST_OK) {
            Sent head = wq.inflight.poll();
            if (head == null || head.localError() != null) {
                return protocolError("negative acknowledgement without a request");
            }
            wq.completeSend(head, status == Wire.ST_REM_ACCESS ? WcStatus.REM_ACCESS_ERR : WcStatus.REM_OP_ERR);
            qp.toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
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
        peekNext = len >= DIRECT_READ_MIN;
        if (len == 0) {
            finishFrame();
        }
    }

    private void finishFrame() {
        switch (curType) {
            case Wire.SEND:
                wq.completeRecv(curRecv, WcStatus.SUCCESS, WcOpcode.RECV, curLen, false, 0);
                ack();
                break;
            case Wire.SEND_IMM:
                wq.completeRecv(curRecv, WcStatus.SUCCESS, WcOpcode.RECV, curLen, true, curImm);
                ack();
                break;
            case Wire.WRITE:
                ack();
                break;
            case Wire.WRITE_IMM:
                wq.completeRecv(curRecv, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, curLen, true, curImm);
                ack();
                break;
            case Wire.READ_RESP:
                wq.completeSend(wq.inflight.poll(), WcStatus.SUCCESS);
                wq.completeLocalErrors();
                break;
            case Wire.SEND_INV:
                finishSendInvalidate();
                break;
            case Wire.HELLO:
                cm.onHello(dst[0].array());
                break;
            case Wire.ACCEPT:
                cm.onAccept(dst[0].array());
                break;
            case Wire.REJECT:
                cm.onReject(curImm, dst[0].array());
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
        SoftMr mr = mem.lookup(curRkey);
        if (mr != null && mr.pd() == qp.init.pd() && mr.remoteInvalidate(curRkey)) {
            wq.completeRecv(curRecv, WcStatus.SUCCESS, WcOpcode.RECV, curLen, false, 0, curRkey);
            ack();
            return;
        }
        LOG.debug("{}: SEND_WITH_INV from {} names rkey {} that this QP cannot invalidate", qp.device.name(),
                qp.remote, Integer.toHexString(curRkey));
        wq.completeRecv(curRecv, WcStatus.REM_OP_ERR, WcOpcode.RECV, 0, false, 0);
        ack();
        tx.control(Wire.ACK, Wire.ST_OK, 0); // carries this request's acknowledgement before the QP stops
        qp.toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
    }

    private void ack() {
        tx.ack(curAckReq);
    }

    private void nak(byte status) {
        tx.control(Wire.ACK, status, 0);
    }

    private boolean inFull() {
        return in != null && in.position() == 0 && in.limit() == in.capacity();
    }
}
