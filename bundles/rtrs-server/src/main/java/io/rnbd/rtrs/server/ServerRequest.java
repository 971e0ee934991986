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
    final SgDesc readDst;
    private final AtomicBoolean completed = new AtomicBoolean();

    ServerRequest(ServerPath path, ServerCon con, int bufId, boolean write, ByteBuffer usrHdr, ByteBuffer data,
                  SgDesc readDst) {
        this.path = path;
        this.con = con;
        this.bufId = bufId;
        this.write = write;
        this.usrHdr = usrHdr;
        this.data = data;
        this.readDst = readDst;
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

    int dataLength() {
        return data.capacity();
    }

    @Override
    public void complete(int errno) {
        if (!completed.compareAndSet(false, true)) {
            throw new IllegalStateException("request completed twice");
        }
        path.complete(this, Math.abs(errno));
    }
}
