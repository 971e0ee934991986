package io.rnbd.rtrs.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rdma.api.Access;
import io.rnbd.rdma.api.MemoryRegion;
import io.rnbd.rdma.api.RdmaException;
import io.rnbd.rdma.api.SendWr;
import io.rnbd.rdma.api.Sge;
import io.rnbd.rtrs.proto.Imm;
import io.rnbd.rtrs.proto.MsgType;
import io.rnbd.rtrs.proto.ProtoException;
import io.rnbd.rtrs.proto.RdmaReadMsg;
import io.rnbd.rtrs.proto.RdmaWriteMsg;
import io.rnbd.rtrs.proto.RkeyRsp;
import io.rnbd.rtrs.proto.Rtrs;
import io.rnbd.rtrs.proto.SgDesc;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The IO of one path, as rtrs-srv.c's process_io_req and rtrs_srv_resp_rdma do it: the
 * path's registration of the session's chunks, each request read and bounded from its chunk
 * before the upper layer sees it, and its answer. Everything here runs under the session's
 * lock; {@link ServerPath} decides when IO may start and what a path that closes does with
 * the requests still out.
 */
final class ServerIo {
    /** The path's log, as before ServerPath was split: operators filter it by that name. */
    private static final Logger LOG = LoggerFactory.getLogger(ServerPath.class);
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final ServerPath path;
    private final PathSession session;
    private final Chunks chunks;
    private final ServerStats stats;
    private final ServerConfig cfg;
    private final DeviceContext dev;
    private final int offBits;
    private final MemoryRegion[] chunkMrs;
    private final MemoryRegion rspMr;
    /** Requests started and not answered yet (under always_invalidate, from before the invalidation completes). */
    private int inflight;
    /** always_invalidate: the chunks whose invalidation is under way, a request of this path in each. */
    private final boolean[] invalidating;

    ServerIo(ServerPath path, DeviceContext dev, ServerConfig cfg) throws RdmaException {
        this.path = path;
        this.session = path.session;
        this.chunks = session.chunks();
        this.stats = session.stats();
        this.cfg = cfg;
        this.dev = dev;
        this.offBits = Imm.offsetBits(chunks.queueDepth());
        this.chunkMrs = new MemoryRegion[chunks.queueDepth()];
        this.invalidating = new boolean[chunks.queueDepth()];
        this.rspMr = dev.pd.register(ByteBuffer.allocateDirect(chunks.queueDepth() * RkeyRsp.SIZE),
                Access.of(Access.LOCAL_WRITE));
    }

    int inflight() {
        return inflight;
    }

    /**
     * Under the lock, at INFO_REQ (after authentication): register the session's chunks on
     * this path's device. Not at the connect request: an unauthenticated client must not make
     * the server allocate and register chunk memory.
     */
    void registerChunks() throws RdmaException {
        ByteBuffer[] memory = chunks.memory();
        try {
            for (int i = 0; i < chunkMrs.length; i++) {
                chunkMrs[i] = dev.pd.register(memory[i].duplicate().clear(),
                        Access.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
            }
        } catch (RdmaException e) {
            for (int i = 0; i < chunkMrs.length; i++) {
                if (chunkMrs[i] != null) {
                    chunkMrs[i].close();
                    chunkMrs[i] = null;
                }
            }
            throw e;
        }
    }

    /** What INFO_RSP tells the client: each chunk's address, rkey and length. */
    List<SgDesc> chunkDescs() {
        List<SgDesc> descs = new ArrayList<>(chunkMrs.length);
        for (MemoryRegion mr : chunkMrs) {
            descs.add(new SgDesc(mr.address(), mr.rkey(), mr.length()));
        }
        return descs;
    }

    /**
     * Under the lock: a request arrived in chunk {@code buf_id}. The request to hand to the
     * upper layer, or null when it is answered already or waits.
     *
     * <p>The chunk may still hold a request of another path: Linux's client fails a path's
     * requests over with the same permit, so the same buf_id (rtrs_clt_failover_req), as soon
     * as it has stopped that path's connections, while this server's upper layer may still
     * run the first copy. Linux's server takes the copy as it takes any request (it checks no
     * chunk), answers it on the new path, and drops the first copy's answer when that path
     * is no longer connected (rtrs_srv_resp_rdma). Here the copy is taken the same way and
     * the first copy's answer is dropped whatever its path's state (the client gave up on it
     * when it resent), but the copy goes to the upper layer only once the first copy has left
     * it: both use the one chunk (chunks are the session's, only their registrations are the
     * path's), and the copy's answer frees the permit, after which the client writes its next
     * request into the chunk. Answered while the first copy still ran, that next request's
     * bytes could reach the backend as the first copy's data, or a read land over them.
     * Waiting costs the copy the rest of the first copy's time; it can be no newer than what
     * the first copy did, so running it again is what the client asked for.
     *
     * <p>A chunk reused on the path that holds it is no failover (a path's requests move only
     * away from it) and closes that path, as before.
     */
    ServerRequest onIoReq(ServerCon con, int imm) throws ProtoException, RdmaException {
        if (!path.connected()) {
            throw new ProtoException(Errno.EPROTO, "IO before INFO_REQ");
        }
        int bufId = Imm.reqBufId(imm, offBits);
        int off = Imm.reqOffset(imm, offBits);
        if (bufId >= chunkMrs.length || off >= chunks.chunkSize()) {
            throw new ProtoException(Errno.EINVAL, "wrong msg_id " + bufId + ", off " + off);
        }
        ServerRequest holder = chunks.holder[bufId];
        if (holder != null && holder.path == path || invalidating[bufId]) {
            throw new ProtoException(Errno.EBUSY, "chunk " + bufId + " reused while in flight");
        }
        inflight++;
        if (cfg.alwaysInvalidate()) {
            // rtrs_srv_inv_rkey: the request is read once the client can no longer write the
            // chunk, that is once the invalidation posted on its connection has completed, or at
            // once where the provider kills the key with a call (no windows: rxe by default), which
            // spares the request a wait for the peer's acknowledgement of a stand-in request
            boolean killed;
            try {
                killed = con.invalidateChunkNow(chunkMrs[bufId]);
            } catch (RdmaException e) {
                inflight--;
                throw e;
            }
            if (killed) {
                return arrived(con, bufId, off);
            }
            invalidating[bufId] = true;
            try {
                con.invalidateChunk(chunkMrs[bufId], ok -> path.onChunkInvalidated(con, bufId, off, ok));
            } catch (RdmaException e) {
                invalidating[bufId] = false;
                inflight--;
                throw e;
            }
            return null;
        }
        return arrived(con, bufId, off);
    }

    /**
     * Under the lock: the invalidation of chunk {@code bufId}'s rkey completed ({@code ok}), or
     * never will (its connection closed). The request in it goes on as in {@link #onIoReq}, or
     * leaves unanswered when the path is closing.
     */
    ServerRequest chunkInvalidated(ServerCon con, int bufId, int off, boolean ok) throws RdmaException {
        invalidating[bufId] = false;
        if (!ok || !path.connected()) {
            inflight--;
            path.maybeDrained();
            return null;
        }
        return arrived(con, bufId, off);
    }

    /** Under the lock: the request in chunk {@code bufId}, the client unable to write it (or trusted to). */
    private ServerRequest arrived(ServerCon con, int bufId, int off) throws RdmaException {
        ServerRequest holder = chunks.holder[bufId];
        ByteBuffer chunk = chunks.memory()[bufId].duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
        ServerRequest r;
        try {
            r = parse(con, bufId, off, chunk);
        } catch (ProtoException e) {
            // Linux closes the path on a message it cannot read; an answer with the errno is
            // kinder, and the chunk is as free either way
            r = new ServerRequest(path, con, bufId, false, EMPTY, EMPTY, null, false).refused(e.errno());
        }
        if (r.error != 0) {
            stats.rejected();
            LOG.debug("bad IO from path {}: {}", path.uuid, Errno.name(r.error));
        }
        if (holder != null) {
            superseded(holder, r);
            return null;
        }
        chunks.holder[bufId] = r;
        if (r.error != 0) {
            chunks.holder[bufId] = null;
            respond(r, r.error);
            return null;
        }
        return r;
    }

    /** Under the lock: {@code copy} failed {@code holder} over; it waits for the chunk. */
    private void superseded(ServerRequest holder, ServerRequest copy) {
        int bufId = copy.bufId;
        holder.superseded = true;
        ServerRequest older = chunks.next[bufId];
        chunks.next[bufId] = copy;
        stats.failedOver();
        LOG.info("chunk {} of {}: the request path {} still runs was sent again on path {} (failover); it runs "
                + "once the first copy is done, whose answer is dropped", bufId, session, holder.path.uuid, path.uuid);
        if (older != null) {
            // sent a third time before the second could start: only the newest is answered
            older.path.io.drop(older);
        }
    }

    /** Under the lock: a request that never reached the upper layer leaves unanswered. */
    private void drop(ServerRequest r) {
        if (r.error == 0) {
            stats.finished();
        }
        inflight--;
        path.maybeDrained();
    }

    /**
     * Under the lock, as the path closes: its copies still waiting for a chunk go (nobody
     * waits for their answers), so that the path drains once its own requests are done.
     */
    void dropWaiting() {
        for (int i = 0; i < chunks.next.length; i++) {
            ServerRequest w = chunks.next[i];
            if (w != null && w.path == path) {
                chunks.next[i] = null;
                inflight--;
                if (w.error == 0) {
                    stats.finished();
                }
            }
        }
    }

    /**
     * The request at {@code off} in the chunk (process_io_req): a WRITE's data is
     * {@code [0, off - usr_len)}, a READ's destination its one descriptor (or none, for a
     * read without data). What cannot be served becomes a request that only carries the
     * error, so that it is answered as Linux answers it (an IO_RSP with the errno, and the
     * client's region invalidated if it asked).
     */
    private ServerRequest parse(ServerCon con, int bufId, int off, ByteBuffer chunk) throws ProtoException {
        if (off > chunk.capacity() - 2) {
            throw new ProtoException(Errno.EINVAL, "message offset " + off + " outside the chunk");
        }
        ByteBuffer at = chunk.duplicate().position(off);
        MsgType type = MsgType.peek(at);
        if (type == MsgType.RDMA_WRITE) {
            int usrLen = RdmaWriteMsg.decode(at).usrLen();
            int dataLen = off - usrLen;
            ServerRequest r = new ServerRequest(path, con, bufId, true, safeSlice(chunk, Math.max(dataLen, 0), usrLen),
                    chunk.slice(0, Math.max(dataLen, 0)), null, false);
            if (usrLen > off || usrLen > Rtrs.MAX_HDR_SIZE) {
                return r.refused(Errno.EMSGSIZE);
            }
            if (dataLen > chunks.maxIoSize()) {
                return r.refused(Errno.EMSGSIZE);
            }
            stats.started(true, dataLen);
            return r;
        }
        if (type == MsgType.RDMA_READ) {
            RdmaReadMsg m = RdmaReadMsg.decode(at);
            int usrLen = m.usrLen();
            int dataLen = off - usrLen;
            SgDesc d = m.descs().isEmpty() ? null : m.descs().get(0);
            boolean needInval = m.has(RdmaReadMsg.NEED_INVAL_F) && d != null;
            ServerRequest r = new ServerRequest(path, con, bufId, false, safeSlice(chunk, Math.max(dataLen, 0), usrLen),
                    chunk.slice(0, Math.max(dataLen, 0)), d, needInval);
            if (usrLen > off || usrLen > Rtrs.MAX_HDR_SIZE) {
                return r.refused(Errno.EMSGSIZE);
            }
            if (m.descs().size() > 1) {
                // Linux's server answers nothing to that; an answer with the error is kinder
                return r.refused(Errno.EINVAL);
            }
            if (d != null && (d.len() == 0 || d.len() > dataLen || d.len() > chunks.maxIoSize())) {
                return r.refused(Errno.EMSGSIZE);
            }
            stats.started(false, dataLen);
            return r;
        }
        throw new ProtoException(Errno.EPROTO, "IO message of type " + type);
    }

    private static ByteBuffer safeSlice(ByteBuffer chunk, int from, int len) {
        int f = Math.min(from, chunk.capacity());
        return chunk.slice(f, Math.min(len, chunk.capacity() - f));
    }

    /**
     * The upper layer finished {@code r}: answer the client unless the path went away
     * meanwhile or the client sent the request again elsewhere, and hand the chunk to a copy
     * that waits for it.
     */
    void complete(ServerRequest r, int errno) {
        ServerRequest next;
        synchronized (session) {
            stats.finished();
            next = release(r);
            if (!path.connected() || r.superseded) {
                if (r.superseded) {
                    LOG.debug("chunk {} of {}: answer ({}) of the copy on path {} dropped, the client resent it",
                            r.bufId, session, Errno.name(errno), path.uuid);
                }
                inflight--;
                path.maybeDrained();
            } else {
                try {
                    respond(r, errno);
                } catch (RdmaException e) {
                    path.failLocked(e.errno(), "cannot answer: " + e.getMessage());
                }
            }
            next = next == null ? null : next.path.io.takeOver(next);
        }
        session.afterUnlock();
        if (next != null) {
            session.dispatch(next);
        }
    }

    /** Under the lock: {@code r} leaves its chunk; the copy that waited for it, if any, holds it now. */
    private ServerRequest release(ServerRequest r) {
        if (chunks.holder[r.bufId] != r) {
            return null;
        }
        ServerRequest next = chunks.next[r.bufId];
        chunks.next[r.bufId] = null;
        chunks.holder[r.bufId] = next;
        return next;
    }

    /**
     * Under the lock, on the path of {@code r}, a copy that now holds its chunk: the request to
     * hand to the upper layer, or null when it was answered (a refused copy) or dropped (its
     * path closed while it waited).
     */
    private ServerRequest takeOver(ServerRequest r) {
        if (!path.connected()) {
            chunks.holder[r.bufId] = null;
            drop(r);
            return null;
        }
        if (r.error != 0) {
            chunks.holder[r.bufId] = null;
            try {
                respond(r, r.error);
            } catch (RdmaException e) {
                path.failLocked(e.errno(), "cannot answer: " + e.getMessage());
            }
            return null;
        }
        return r;
    }

    /**
     * Under the lock: the answer, as one chain (rdma_write_sg / send_io_resp_imm): the read
     * data, the SEND_WITH_INV the client asked for, then the IO_RSP: an empty
     * RDMA_WRITE_WITH_IMM, or under always_invalidate a SEND_WITH_IMM with the chunk's new
     * rkey. The caller has released the chunk ({@link #release}).
     */
    private void respond(ServerRequest r, int errno) throws RdmaException {
        inflight--;
        ServerCon con = r.con;
        List<SendWr> chain = new ArrayList<>(3);
        if (!r.write && errno == 0 && r.readDst != null) {
            SgDesc d = r.readDst;
            chain.add(con.dataWrite(new Sge(chunkMrs[r.bufId], 0, d.len()), d.addr(), d.key()));
        }
        if (r.needInval) {
            chain.add(con.invalidate(r.readDst.key()));
        }
        // 9 bits of errno (rtrs_to_io_rsp_imm): Linux's kernel cuts a larger one to garbage
        // (ENOTSUPP, 524, would arrive as ENOMEM); here it becomes EIO, Linux's catch-all
        int imm = Imm.ioRsp(r.bufId, errno > Imm.RSP_ERRNO_MASK ? Errno.EIO : errno, r.needInval);
        if (cfg.alwaysInvalidate()) {
            int rkey = con.reregisterChunk(chunkMrs[r.bufId]);
            ByteBuffer slot = rspMr.buffer().position(r.bufId * RkeyRsp.SIZE); // buffer() is a duplicate already
            new RkeyRsp(r.bufId, rkey).encode(slot);
            chain.add(con.rkeyResponse(imm, rspMr, r.bufId * RkeyRsp.SIZE, RkeyRsp.SIZE));
        } else {
            chain.add(con.emptyWriteImm(imm));
        }
        con.post(chain);
    }

    /** Outside the lock, after the path's connections: give back the memory registrations. */
    void close() {
        for (MemoryRegion mr : chunkMrs) {
            if (mr != null) {
                mr.close();
            }
        }
        rspMr.close();
    }
}
