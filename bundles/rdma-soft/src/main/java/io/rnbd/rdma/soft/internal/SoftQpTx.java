package io.rnbd.rdma.soft.internal;

import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.CmEvent;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
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
import java.util.Arrays;

/**
 * A queue pair's transmit side (siw's {@code siw_qp_tx.c}): turns the send queue into
 * frames, queues the headers the receive side and the connection manager answer with
 * (READ responses, acknowledgements, handshake frames), and writes them to the socket in
 * gathered writes, from the IO thread or, when the send side is idle, from the posting
 * thread ({@link #transmitInline}).
 *
 * <p>Headers and small payloads are copied into the arena; larger payloads are written
 * straight from their regions. Every frame carries the acknowledgements owed to the peer.
 * All state is guarded by the QP's lock.
 */
final class SoftQpTx {
    /** The QP's logger: its parts log as the QP always did. */
    private static final Logger LOG = LoggerFactory.getLogger(SoftQp.class);
    private static final int ARENA_SIZE = 64 * 1024;
    private static final int INLINE_MAX = 512;
    private static final int MAX_OUT_SLOTS = 1024;
    private static final int ACK_BATCH = 256;

    private final SoftQp qp;
    private final SocketChannel ch;
    private final SoftQpQueues wq;
    private final SoftMemTable mem;

    private ByteBuffer arena;
    private ByteBuffer[] out = new ByteBuffer[64];
    private int outHead;
    private int outTail;
    private boolean runOpen;
    private boolean shutdownAfterDrain;
    private boolean outputShut;
    /** An inline transmit failed: the IO thread turns it into the error (it owns callbacks). */
    private IOException inlineWriteFailed;
    private boolean localErrorPending;
    /** The peer's requests received and not yet acknowledged; the next frame out carries them. */
    private int pendingAcks;
    /** One of them asked for an acknowledgement at once (it was posted signaled). */
    private boolean ackOwed;

    SoftQpTx(SoftQp qp, SocketChannel ch, SoftQpQueues wq, SoftMemTable mem) {
        this.qp = qp;
        this.ch = ch;
        this.wq = wq;
        this.mem = mem;
    }

    void allocate() {
        arena = ByteBuffer.allocateDirect(ARENA_SIZE).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Transmit the posted sends from the caller's thread when the send side is idle (RTS,
     * nothing queued or half-written, no local error waiting). True when everything posted
     * went out and the IO thread need not be woken.
     */
    boolean transmitInline() {
        if (!qp.lock.tryLock()) {
            return false;
        }
        try {
            if (qp.phase != Phase.RTS || qp.channelClosed || localErrorPending || outHead != outTail
                    || !wq.sendQ.isEmpty()) {
                return false;
            }
            SendWr wr;
            while ((wr = wq.postedSends.peek()) != null) {
                if (arena.remaining() < Wire.HDR + INLINE_MAX || wr.sgl().size() + 1 > MAX_OUT_SLOTS - outTail
                        || qp.checkLocal(wr.sgl(), wr.opcode() == WrOpcode.RDMA_READ) != null) {
                    break; // the IO thread queues it, or fails it with its completion
                }
                wq.postedSends.poll();
                encode(wr);
                wq.inflight.add(new Sent(wr, null));
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
            return outHead == outTail && wq.postedSends.isEmpty();
        } finally {
            qp.lock.unlock();
        }
    }

    /** IO thread: the failure of an inline transmit, taken once (null if none). */
    IOException takeInlineWriteFailure() {
        IOException e = inlineWriteFailed;
        if (e != null) {
            inlineWriteFailed = null;
        }
        return e;
    }

    /** Output queued and not yet written. */
    boolean pending() {
        return outHead < outTail;
    }

    void pump() {
        if (qp.phase != Phase.RTS) {
            return;
        }
        wq.takePosted();
        do {
            while (!localErrorPending && !wq.sendQ.isEmpty()) {
                SendWr wr = wq.sendQ.peek();
                if (arena.remaining() < Wire.HDR + INLINE_MAX
                        || outTail - outHead + wr.sgl().size() + 1 > MAX_OUT_SLOTS) {
                    break;
                }
                wq.sendQ.poll();
                WcStatus bad = qp.checkLocal(wr.sgl(), wr.opcode() == WrOpcode.RDMA_READ);
                if (bad != null) {
                    wq.inflight.add(new Sent(wr, bad));
                    localErrorPending = true;
                    wq.completeLocalErrors();
                    break;
                }
                encode(wr);
                wq.inflight.add(new Sent(wr, null));
            }
            flushOut();
            // a full write frees the whole arena: keep going while the socket takes everything
        } while (qp.phase == Phase.RTS && !localErrorPending && !wq.sendQ.isEmpty() && outHead == outTail
                && !qp.channelClosed);
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

    /**
     * Answer the peer's RDMA READ (siw answers from its transmit side too) from the region
     * its rkey names in this device's table, if the access is allowed there; else the QP fails.
     */
    void readResponse(long addr, int rkey, int len) {
        if (len == 0) {
            // like a zero-length WRITE: no memory, no rkey check
            control(Wire.READ_RESP, Wire.ST_OK, 0, 0, 0);
            return;
        }
        SoftMr mr = mem.lookup(rkey);
        if (mr == null || len < 0 || mr.pd() != qp.init.pd() || !mr.allows(rkey, Access.REMOTE_READ, addr, len)) {
            control(Wire.READ_RESP, Wire.ST_REM_ACCESS, 0);
            qp.toError(CmEvent.of(CmEvent.Type.DISCONNECTED), false);
            return;
        }
        control(Wire.READ_RESP, Wire.ST_OK, len, 0, 0);
        if (len > 0) {
            gather(mr.slice((int) (addr - mr.address()), len));
        }
    }

    /** One of the peer's requests is placed: the next frame out acknowledges it; at once if it asked. */
    void ack(boolean ackReq) {
        ackOwed |= ackReq;
        if (++pendingAcks >= ACK_BATCH) {
            flushAcks();
        }
    }

    /** A request asked for an acknowledgement that no frame has carried yet. */
    boolean ackOwed() {
        return ackOwed;
    }

    /** An ACK frame for what is pending (any frame out would carry it as well). */
    void flushAcks() {
        if (pendingAcks > 0 && qp.phase == Phase.RTS) {
            control(Wire.ACK, Wire.ST_OK, 0);
        }
        pendingAcks = 0;
        ackOwed = false;
    }

    void control(byte type, byte status, int aux) {
        control(type, status, (byte) 0, 0, 0, 0, 0, aux);
    }

    void control(byte type, byte status, int len, long addr, int aux) {
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

    void arenaBytes(byte[] bytes) {
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

    /** Queue {@code b} to be written from where it is, after what is queued. */
    void gather(ByteBuffer b) {
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

    /** From now on, shut the socket's output down once everything queued is written. */
    void shutdownAfterDrain() {
        shutdownAfterDrain = true;
    }

    void flushOut() {
        if (qp.channelClosed) {
            return;
        }
        if (outHead < outTail) {
            try {
                ch.write(out, outHead, outTail - outHead);
            } catch (IOException e) {
                LOG.debug("{}: write to {} failed", qp.device.name(), qp.remote, e);
                qp.toError(CmEvent.of(CmEvent.Type.DISCONNECTED), true);
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
                    qp.closeChannel();
                    return;
                }
            }
        }
        qp.updateInterest();
    }
}
