package io.rnbd.rtrs.server;

import io.rnbd.rtrs.api.RtrsServerRequest;
import io.rnbd.rtrs.api.RtrsServerSession;
import io.rnbd.rtrs.proto.SgDesc;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/** One request handed to the upper layer; answers the client exactly once. */
final class ServerRequest implements RtrsServerRequest {
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
    private final AtomicBoolean completed = new AtomicBoolean();

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
        return path.session;
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

    @Override
    public void complete(int errno) {
        if (!completed.compareAndSet(false, true)) {
            throw new IllegalStateException("request completed twice");
        }
        path.io.complete(this, Math.abs(errno));
    }
}
