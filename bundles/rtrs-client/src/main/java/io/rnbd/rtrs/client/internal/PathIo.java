package io.rnbd.rtrs.client.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.ProtectionDomain;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rtrs.api.PathState;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.ProtoException;
import io.rnbd.rtrs.proto.RdmaReadMsg;
import io.rnbd.rtrs.proto.RdmaWriteMsg;
import io.rnbd.rtrs.proto.RkeyRsp;
import io.rnbd.rtrs.proto.SgDesc;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The requests in flight on one path instance (Linux's rtrs_clt_write_req/read_req and
 * rtrs_clt_rdma_done): each written into the server's chunk of its permit, a read's pages
 * reachable by the server only while it is in flight, each answered once. Guarded by the
 * session lock, but for a post's ringing ({@link Post}).
 */
final class PathIo {
    private final ClientPath path;
    private final PathSession session;
    final Map<Integer, ClientRequest> inflight = new HashMap<>();
    /**
     * The session's buffer, registered for local access only: the source of requests and
     * read messages. No peer can write it (issue 21: it used to be remote-writable whole,
     * for as long as the path lived).
     */
    private MemoryRegion memMr;
    /**
     * Per request in flight (by permit) that has one: a read's registration of exactly the
     * pages the server is to write its data into (the caller's buffer, or the permit's), or an
     * in-place write's registration of the caller's buffer (local access only), made when the
     * request is posted and closed when its answer arrives, before the caller sees the data,
     * or when the path goes. A read's rkey is a fresh one each time, so the server can reach
     * no other memory of ours and this memory for no longer than the read is in flight; a post
     * of a request that failed over from here finds its region closed and sends nothing.
     */
    private final Map<Integer, MemoryRegion> ioMrs = new HashMap<>();
    private static final java.util.Set<Access> READ_TARGET = Access.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE);
    private static final java.util.Set<Access> LOCAL_SOURCE = Access.of();
    private SgDesc[] rbufs;
    private int[] rkeys;
    /** From this instance's CON_RSP: answers carry RKEY_RSP (always_invalidate on the server). */
    private boolean newRkey;

    PathIo(ClientPath path) {
        this.path = path;
        this.session = path.session;
    }

    // ---- set up by the handshake, released by teardown ---------------------------------

    void newRkey(boolean on) {
        newRkey = on;
    }

    /** The session's buffer in this instance's protection domain, once. */
    void registerMemory(ProtectionDomain pd) throws RdmaException {
        if (memMr == null) {
            memMr = pd.register(session.memory(), Access.of(Access.LOCAL_WRITE));
        }
    }

    /** INFO_RSP: the server's chunk of every permit, and each chunk's rkey. */
    void chunks(List<SgDesc> chunks) {
        rbufs = chunks.toArray(new SgDesc[0]);
        rkeys = new int[rbufs.length];
        for (int i = 0; i < rbufs.length; i++) {
            rkeys[i] = rbufs[i].key();
        }
    }

    /** Teardown: the read regions closed, the buffer's registration dropped; returns what was in flight. */
    List<ClientRequest> release() {
        // the reads in flight here go elsewhere: the server of this path may no longer write them
        for (MemoryRegion mr : ioMrs.values()) {
            mr.close();
        }
        ioMrs.clear();
        memMr = null;
        List<ClientRequest> orphans = new ArrayList<>(inflight.values());
        inflight.clear();
        path.inflightCount = 0;
        return orphans;
    }

    // ---- requests --------------------------------------------------------------------

    /**
     * Under the lock: put {@code r} in flight on this path and prepare its post, which the
     * session rings after releasing the lock, copying a write's data in first. A post on the
     * soft provider transmits a whole frame from the posting thread (a 128 KiB write is tens
     * of microseconds), and completions of other IO must not wait for that behind the lock:
     * they did, at one context switch per IO on the completing thread.
     */
    void post(ClientRequest r) {
        int id = r.permit;
        int base = id * session.slotSize();
        int msgOff = r.dataLen + r.usrLen;
        ClientCon[] cons = path.cons;
        ClientCon c = cons[1 + Math.floorMod(r.submitter, cons.length - 1)];
        int imm = Imm.ioReq(id, msgOff, Imm.offsetBits(session.queueDepth()));
        r.path = path;
        r.tried.add(path);
        r.sentNanos = session.nanoTime();
        inflight.put(id, r);
        path.inflightCount = inflight.size();
        List<Sge> sgl;
        long remote;
        if (r.write && r.inPlace) {
            // the data from the caller's buffer, the header after it from the permit's: one
            // contiguous message in the server's chunk, as a copy would have made it
            MemoryRegion data;
            try {
                data = inPlaceSource(id, r);
            } catch (RdmaException e) {
                path.fail(e.errno(), "cannot register a write's buffer: " + e.getMessage());
                return;
            }
            sgl = List.of(new Sge(data, 0, r.dataLen), new Sge(memMr, base + r.dataLen, r.usrLen + RdmaWriteMsg.SIZE));
            remote = rbufs[id].addr();
        } else if (r.write) {
            sgl = List.of(new Sge(memMr, base, msgOff + RdmaWriteMsg.SIZE));
            remote = rbufs[id].addr();
        } else {
            // never NEED_INVAL: on adapters only fast-registered regions can be invalidated by a
            // peer (a SEND_WITH_INV of another fails our QP); the region is closed here instead
            List<SgDesc> target;
            try {
                target = r.dataLen == 0 ? List.of() : List.of(readTarget(id, r));
            } catch (RdmaException e) {
                // in flight already: the failover takes it to another path
                path.fail(e.errno(), "cannot register a read's buffer: " + e.getMessage());
                return;
            }
            RdmaReadMsg m = new RdmaReadMsg(r.usrLen, 0, target);
            m.encode(session.memory().position(base + msgOff));
            sgl = List.of(new Sge(memMr, base + r.dataLen, r.usrLen + m.size()));
            remote = rbufs[id].addr() + r.dataLen;
        }
        session.ringAfterUnlock(new Post(c, r, id, base, sgl, remote, rkeys[id], imm));
    }

    /**
     * One IO post, prepared under the session lock and rung after it ({@link Doorbells#ring}),
     * with the other posts to its connection that are ready then.
     */
    final class Post {
        final ClientCon con;
        private final ClientRequest r;
        private final int id;
        private final int base;
        private final List<Sge> sgl;
        private final long remote;
        private final int rkey;
        private final int imm;

        Post(ClientCon con, ClientRequest r, int id, int base, List<Sge> sgl, long remote, int rkey, int imm) {
            this.con = con;
            this.r = r;
            this.id = id;
            this.base = base;
            this.sgl = sgl;
            this.remote = remote;
            this.rkey = rkey;
            this.imm = imm;
        }

        /** Outside the lock: a write's data goes into its permit's buffer here (unless it goes in place). */
        SendWr prepare() {
            if (r.write && !r.inPlace) {
                r.copyData(session.memory().position(base));
            }
            return con.ioWr(sgl, remote, rkey, imm);
        }

        void posted() {
            path.stats.io(r.write, r.dataLen);
        }

        void failed(int errno) {
            session.locked(() -> {
                if (con.gen == path.gen && inflight.get(id) == r) {
                    // still in flight on this connection: the failover takes it along
                    path.fail(errno, "cannot post IO");
                }
                // else the path already failed (or moved on) and took the request with it
            });
        }
    }

    /**
     * The read descriptor the server writes into: a new registration of the first {@code len}
     * bytes of the permit's buffer, remote-writable until {@link #closeIoRegion}.
     */
    SgDesc readTarget(int permit, ClientRequest r) throws RdmaException {
        closeIoRegion(permit);
        ByteBuffer pages;
        if (r.inPlace) {
            pages = r.data.duplicate();
        } else {
            int base = permit * session.slotSize();
            pages = session.memory().duplicate().clear().position(base).limit(base + r.dataLen);
        }
        MemoryRegion mr = path.pd.register(pages, READ_TARGET);
        ioMrs.put(permit, mr);
        return new SgDesc(mr.address(), mr.rkey(), r.dataLen);
    }

    /** Under the lock: the caller's buffer of an in-place write, registered for local access while it is in flight. */
    private MemoryRegion inPlaceSource(int permit, ClientRequest r) throws RdmaException {
        closeIoRegion(permit);
        MemoryRegion mr = path.pd.register(r.data.duplicate(), LOCAL_SOURCE);
        ioMrs.put(permit, mr);
        return mr;
    }

    /** Under the lock: the server may no longer write the read of {@code permit}. */
    private void closeIoRegion(int permit) {
        MemoryRegion mr = ioMrs.remove(permit);
        if (mr != null) {
            mr.close();
        }
    }

    /**
     * Under the lock: the answer {@code imm} (IO_RSP or IO_RSP_W_INV); with {@code msg}, the
     * RKEY_RSP that carries its chunk's new rkey.
     */
    void answered(int imm, ByteBuffer msg) throws ProtoException {
        int id = Imm.rspMsgId(imm);
        if (msg != null) {
            if (!newRkey) {
                throw new ProtoException(Errno.EPROTO, "RKEY_RSP from a server without always_invalidate");
            }
            RkeyRsp k = RkeyRsp.decode(msg);
            if (k.bufId() != id || id >= rkeys.length) {
                throw new ProtoException(Errno.EPROTO, "RKEY_RSP for chunk " + k.bufId() + " in answer " + id);
            }
            rkeys[id] = k.rkey();
        }
        ClientRequest r = inflight.remove(id);
        if (r == null) {
            throw new ProtoException(Errno.EPROTO, "response for unknown request " + id);
        }
        // the server is done with the read's pages: they stop being reachable before
        // the caller reads them (Linux: the server's SEND_WITH_INV or the client's
        // LOCAL_INV of the request's fast-reg MR)
        closeIoRegion(id);
        path.inflightCount = inflight.size();
        long lat = session.nanoTime() - r.sentNanos;
        long avg = path.ioLatency;
        path.ioLatency = avg == 0 ? lat : avg + (lat - avg) / 8;
        path.stats.latency(lat);
        session.finish(r, Imm.rspErrno(imm));
    }

    /**
     * Under the lock: a request in flight here has gone unanswered for longer than the
     * session's request timeout (as Linux's block layer times a request out): the path is
     * failed, so the request and its companions go to another path, fenced.
     */
    boolean timeOutStuck(long nowNanos, long timeoutNanos) {
        if (path.sm.state() != PathState.CONNECTED) {
            return false;
        }
        for (ClientRequest r : inflight.values()) {
            long age = nowNanos - r.sentNanos;
            if (age > timeoutNanos) {
                path.stats.requestTimeout();
                path.fail(Errno.ETIMEDOUT, "a request went unanswered for " + age / 1_000_000 + " ms");
                return true;
            }
        }
        return false;
    }
}
