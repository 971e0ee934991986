package io.rnbd.rnbd.client.internal;

import io.rnbd.rnbd.proto.MsgType;
import io.rnbd.rnbd.proto.RnbdMsg;
import io.rnbd.rnbd.proto.SessInfoRsp;
import io.rnbd.rtrs.api.IoDone;
import io.rnbd.rtrs.api.RtrsClientSession;
import io.rnbd.rtrs.api.RtrsSessionListener;
import io.rnbd.rtrs.api.SessionState;
import java.nio.ByteBuffer;

/**
 * What the client tests' scripted sessions share: session "s1", connected for good, queue
 * depth 8, 4 KiB of header room, no listeners kept, nothing to close, SESS_INFO answered
 * with protocol version 2, inline. A subclass says how the "server" answers the rest.
 */
abstract class ConnectedSession implements RtrsClientSession {
    private final int maxIo;

    ConnectedSession(int maxIo) {
        this.maxIo = maxIo;
    }

    /**
     * The answer to a message other than SESS_INFO: {@code payload} is a write's data,
     * {@code dst} a read's destination (the other one is null).
     */
    abstract void answer(RnbdMsg m, ByteBuffer payload, ByteBuffer dst, IoDone done) throws Exception;

    @Override
    public void write(ByteBuffer usrHdr, ByteBuffer payload, IoDone done) {
        dispatch(usrHdr, payload, null, done);
    }

    @Override
    public void read(ByteBuffer usrHdr, ByteBuffer dst, IoDone done) {
        dispatch(usrHdr, null, dst, done);
    }

    private void dispatch(ByteBuffer usrHdr, ByteBuffer payload, ByteBuffer dst, IoDone done) {
        try {
            RnbdMsg m = RnbdMsg.decode(usrHdr.duplicate());
            if (m.type() == MsgType.SESS_INFO) {
                new SessInfoRsp(2).encode(dst.duplicate());
                done.done(0);
            } else {
                answer(m, payload, dst, done);
            }
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Override
    public String name() {
        return "s1";
    }

    @Override
    public SessionState state() {
        return SessionState.CONNECTED;
    }

    @Override
    public int lastError() {
        return 0;
    }

    @Override
    public int queueDepth() {
        return 8;
    }

    @Override
    public int maxIoSize() {
        return maxIo;
    }

    @Override
    public int maxHdrSize() {
        return 4096;
    }

    @Override
    public void addListener(RtrsSessionListener listener) {
    }

    @Override
    public void removeListener(RtrsSessionListener listener) {
    }

    @Override
    public void close() {
    }
}
