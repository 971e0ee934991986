package io.rnbd.rtrs.server;

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
    private final ServerSession session;
    private final ServerConfig cfg;
    private final DeviceContext dev;
    private final int offBits;
    private final MemoryRegion[] chunkMrs;
    private final MemoryRegion rspMr;
    /** Requests started and not answered yet. */
    private int inflight;

    ServerIo(ServerPath path, DeviceContext dev, ServerConfig cfg) throws RdmaException {
        this.path = path;
        this.session = path.session;
        this.cfg = cfg;
        this.dev = dev;
        this.offBits = Imm.offsetBits(cfg.queueDepth());
        this.chunkMrs = new MemoryRegion[cfg.queueDepth()];
        this.rspMr = dev.pd.register(ByteBuffer.allocateDirect(cfg.queueDepth() * RkeyRsp.SIZE),
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
        ByteBuffer[] chunks = session.chunks();
        try {
            for (int i = 0; i < chunkMrs.length; i++) {
                chunkMrs[i] = dev.pd.register(chunks[i].duplicate().clear(),
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

    ServerRequest onIoReq(ServerCon con, int imm) throws ProtoException, RdmaException {
        if (!path.connected()) {
            throw new ProtoException(Errno.EPROTO, "IO before INFO_REQ");
        }
        int bufId = Imm.reqBufId(imm, offBits);
        int off = Imm.reqOffset(imm, offBits);
        if (bufId >= chunkMrs.length || off >= cfg.chunkSize()) {
            throw new ProtoException(Errno.EINVAL, "wrong msg_id " + bufId + ", off " + off);
        }
        if (session.chunkBusy[bufId]) {
            throw new ProtoException(Errno.EBUSY, "chunk " + bufId + " reused while in flight");
        }
        session.chunkBusy[bufId] = true;
        if (cfg.alwaysInvalidate()) {
            chunkMrs[bufId].invalidate();
        }
        inflight++;
        ByteBuffer chunk = session.chunks()[bufId].duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
        ServerRequest r;
        try {
            r = parse(con, bufId, off, chunk);
        } catch (ProtoException e) {
            // Linux closes the path on a message it cannot read; an answer with the errno is
            // kinder, and the chunk is as free either way
            r = new ServerRequest(path, con, bufId, false, EMPTY, EMPTY, null, false).refused(e.errno());
        }
        if (r.error != 0) {
            session.stats.rejected();
            LOG.debug("bad IO from path {}: {}", path.uuid, Errno.name(r.error));
            respond(r, r.error);
            return null;
        }
        return r;
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
            if (dataLen > cfg.maxIoSize()) {
                return r.refused(Errno.EMSGSIZE);
            }
            session.stats.started(true, dataLen);
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
            if (d != null && (d.len() == 0 || d.len() > dataLen || d.len() > cfg.maxIoSize())) {
                return r.refused(Errno.EMSGSIZE);
            }
            session.stats.started(false, dataLen);
            return r;
        }
        throw new ProtoException(Errno.EPROTO, "IO message of type " + type);
    }

    private static ByteBuffer safeSlice(ByteBuffer chunk, int from, int len) {
        int f = Math.min(from, chunk.capacity());
        return chunk.slice(f, Math.min(len, chunk.capacity() - f));
    }

    /** The upper layer finished {@code r}: answer the client unless the path went away meanwhile. */
    void complete(ServerRequest r, int errno) {
        synchronized (session) {
            session.stats.finished();
            if (!path.connected()) {
                inflight--;
                session.chunkBusy[r.bufId] = false;
                path.maybeDrained();
                return;
            }
            try {
                respond(r, errno);
            } catch (RdmaException e) {
                path.failLocked(e.errno(), "cannot answer: " + e.getMessage());
            }
        }
        session.runClosers();
    }

    /**
     * Under the lock: the answer, as one chain (rdma_write_sg / send_io_resp_imm): the read
     * data, the SEND_WITH_INV the client asked for, then the IO_RSP: an empty
     * RDMA_WRITE_WITH_IMM, or under always_invalidate a SEND_WITH_IMM with the chunk's new
     * rkey. The chunk is free again once it is posted.
     */
    private void respond(ServerRequest r, int errno) throws RdmaException {
        inflight--;
        session.chunkBusy[r.bufId] = false;
        ServerCon con = r.con;
        List<SendWr> chain = new ArrayList<>(3);
        if (!r.write && errno == 0 && r.readDst != null) {
            SgDesc d = r.readDst;
            chain.add(con.dataWrite(new Sge(chunkMrs[r.bufId], 0, d.len()), d.addr(), d.key()));
        }
        if (r.needInval) {
            chain.add(con.invalidate(r.readDst.key()));
        }
        int imm = Imm.ioRsp(r.bufId, errno, r.needInval);
        if (cfg.alwaysInvalidate()) {
            int rkey = chunkMrs[r.bufId].reregister();
            ByteBuffer slot = rspMr.buffer().duplicate().position(r.bufId * RkeyRsp.SIZE);
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
