package io.rnbd.rtrs.server.internal;

import io.rnbd.common.Errno;
import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.api.RtrsServerSession;
import io.rnbd.rtrs.proto.SgDesc;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * One request handed to the upper layer. It answers the client at most once, and this is the
 * one place that guards it: the first {@link #complete} answers, any later one (an upper layer
 * failing after it answered, the handoff's EIO for an upper layer that threw, a parked
 * request's timeout racing its delivery) is dropped here, so no caller guards it again.
 */
final class ServerRequest implements RtrsServerRequest {
    /** The path's log, as before ServerPath was split: operators filter it by that name. */
    private static final Logger LOG = LoggerFactory.getLogger(ServerPath.class);
    private static final VarHandle COMPLETED;

    static {
        try {
            COMPLETED = MethodHandles.lookup().findVarHandle(ServerRequest.class, "completed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final ServerPath path;
    final ServerCon con;
    final int bufId;
    final boolean write;
    private final ByteBuffer usrHdr;
    private final ByteBuffer data;
    /** A read's destination in the client's memory; null for writes and reads without data. */
    final SgDesc readDst;
    /** The client asked (NEED_INVAL) that its read region be invalidated before the answer. */
    final boolean needInval;
    /** Non-zero: the request cannot be served and is answered with this errno at once. */
    int error;
    /**
     * Under the session lock: the client sent this request again on another path (failover)
     * while it ran; its answer is dropped, the copy's is the one the client waits for.
     */
    boolean superseded;
    /** Set by the first {@link #complete} (through {@link #COMPLETED}: no object per request). */
    @SuppressWarnings("unused")
    private volatile boolean completed;

    ServerRequest(ServerPath path, ServerCon con, int bufId, boolean write, ByteBuffer usrHdr, ByteBuffer data,
                  SgDesc readDst, boolean needInval) {
        this.path = path;
        this.con = con;
        this.bufId = bufId;
        this.write = write;
        this.usrHdr = usrHdr;
        this.data = data;
        this.readDst = readDst;
        this.needInval = needInval;
    }

    ServerRequest refused(int errno) {
        this.error = errno;
        return this;
    }

    @Override
    public RtrsServerSession session() {
        return path.session.view();
    }

    @Override
    public boolean isWrite() {
        return write;
    }

    @Override
    public ByteBuffer userHeader() {
        return usrHdr.asReadOnlyBuffer();
    }

    @Override
    public ByteBuffer data() {
        return write ? data.asReadOnlyBuffer() : data.duplicate();
    }

    /** The first call answers the client (errno 0 or positive); a later one is dropped. */
    @Override
    public void complete(int errno) {
        if (!COMPLETED.compareAndSet(this, false, true)) {
            LOG.debug("chunk {} of {}: second answer ({}) dropped", bufId, path.session, Errno.name(Math.abs(errno)));
            return;
        }
        path.io.complete(this, Math.abs(errno));
    }
}
